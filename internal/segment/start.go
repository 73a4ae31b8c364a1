package segment

import (
	"context"
	"fmt"
	"io"
	"time"
)

// MaxLate is how late a process may reach --start-at and still start:
// larger than the clock skew of NTP-synchronised hosts (milliseconds) and
// timer jitter on a busy host, small against a benchmark of minutes. A
// process later than this refuses to run (LateError): its sessions would
// start behind the other segments' and the union would no longer be the
// single-process schedule.
const MaxLate = time.Second

// Clock is the time source of WaitStart; tests inject a fake one.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// LateError is a process that reached the common start too late.
type LateError struct {
	At   time.Time     // the --start-at time
	Late time.Duration // how late the process was
}

func (e *LateError) Error() string {
	return fmt.Sprintf("--start-at %s was %s ago, more than the %s allowed: this process is late and would not send on the common schedule; start all segments again with a later --start-at (for example 2 minutes ahead: date -u -d +2min +%%Y-%%m-%%dT%%H:%%M:%%SZ)",
		e.At.UTC().Format(time.RFC3339Nano), e.Late.Round(time.Millisecond), MaxLate)
}

// ParseStart reads an RFC 3339 time, e.g. 2026-11-23T23:30:00Z.
func ParseStart(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time such as 2026-11-23T23:30:00Z", s)
	}
	return t, nil
}

// WaitStart waits until the wall-clock time at on c. It returns at once
// with a *LateError when at is more than MaxLate past, and ctx's error
// when ctx ends first. It returns how late the process was (0 when it
// waited).
func WaitStart(ctx context.Context, c Clock, at time.Time) (time.Duration, error) {
	d := at.Sub(c.Now())
	if d < -MaxLate {
		return -d, &LateError{At: at, Late: -d}
	}
	if d <= 0 {
		return -d, nil
	}
	select {
	case <-c.After(d):
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Start is a segment's common start (--start-at) and the clock it waits
// on.
type Start struct {
	At    time.Time // zero: start at once
	Clock Clock
}

// Wait waits for At (at once when zero), saying on log (unless nil) that
// segment seg waits and how late it started; see WaitStart.
func (s Start) Wait(ctx context.Context, seg Segment, log io.Writer) error {
	if s.At.IsZero() {
		return nil
	}
	if log != nil {
		fmt.Fprintf(log, "mtrun: segment %s waiting for %s\n", seg, s.String())
	}
	late, err := WaitStart(ctx, s.Clock, s.At)
	if err != nil {
		return err
	}
	if late > 0 && log != nil {
		fmt.Fprintf(log, "mtrun: started %s after --start-at\n", late.Round(time.Millisecond))
	}
	return nil
}

// String is At in RFC 3339 (UTC), "" when zero (the manifest's start_at).
func (s Start) String() string {
	if s.At.IsZero() {
		return ""
	}
	return s.At.UTC().Format(time.RFC3339Nano)
}
