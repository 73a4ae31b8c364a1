// Package precise waits until absolute deadlines more accurately than
// Go's timers. When a Go process is idle, its timers sleep in epoll with a
// whole-millisecond timeout, so they fire up to about a millisecond late
// (measured on a 2-core VM: a 2 ms period woke a median 0.58–0.70 ms
// late on a timer, 0.12–0.13 ms with nanosleep). A precise wait sleeps on
// a timer (which a cancelled context interrupts) until Coarse before the
// deadline, then blocks its OS thread in nanosleep, whose high-resolution
// timer wakes within tens of microseconds, and may spin the last stretch.
package precise

import (
	"context"
	"runtime"
	"time"
)

// Coarse is how long before the deadline a precise wait leaves the Go
// timer for nanosleep: more than the timer's lateness, and short enough
// that a cancelled context is noticed soon.
const Coarse = 1500 * time.Microsecond

// Sleeper waits until absolute deadlines, reusing one timer. The zero
// value waits on the Go timer alone. A Sleeper is for one goroutine.
type Sleeper struct {
	// Precise makes the last Coarse of each wait a nanosleep.
	Precise bool
	// Spin, with Precise, ends the nanosleep Spin before the deadline and
	// yields (runtime.Gosched) until it: microsecond accuracy for that
	// much CPU per wait.
	Spin time.Duration
	// TimerOnly, with Precise, leaves a wait shorter than it at its start
	// to the Go timer alone. A process that waits that briefly over and
	// over is busy, and a busy process's timers are accurate; a nanosleep
	// would give the goroutine's P away, and the goroutine would then
	// wait for one behind the others.
	TimerOnly time.Duration
	timer     *time.Timer
}

// threads tells whether a wait of d, at its start, ends in a nanosleep.
func (s *Sleeper) threads(d time.Duration) bool {
	return s.Precise && d > 0 && d >= s.TimerOnly
}

// Until waits until deadline or ctx is done, returning ctx.Err() then. A
// deadline in the past returns at once. It never returns before the
// deadline with a nil error.
func (s *Sleeper) Until(ctx context.Context, deadline time.Time) error {
	d := time.Until(deadline)
	precise := s.threads(d)
	if precise {
		d -= Coarse
	}
	if d > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(d)
		} else {
			s.timer.Reset(d)
		}
		select {
		case <-s.timer.C:
		case <-ctx.Done():
			s.timer.Stop()
			return ctx.Err()
		}
	}
	if !precise {
		return ctx.Err()
	}
	if d := time.Until(deadline) - s.Spin; d > 0 {
		threadSleep(d)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
	return nil
}

// Stop releases the timer.
func (s *Sleeper) Stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}
