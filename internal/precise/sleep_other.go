//go:build !linux

package precise

import "time"

// threadSleep sleeps for d; without nanosleep it is time.Sleep, and the
// spin of a precise wait makes up for its granularity.
func threadSleep(d time.Duration) { time.Sleep(d) }
