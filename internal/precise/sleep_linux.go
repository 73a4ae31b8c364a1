package precise

import (
	"syscall"
	"time"
)

// threadSleep blocks the calling OS thread for d with nanosleep, which
// the kernel's high-resolution timers wake within tens of microseconds,
// unlike Go's idle timers (whole milliseconds).
func threadSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
