package schedule

import (
	"fmt"
	"math"
	"time"
)

// Trace is the trace clock: a session starts at its first turn's trace
// timestamp (conv.Message.TimestampMs) relative to the first session of
// the trace, and a later turn of the session goes at its own trace time
// (relative to the session's first turn), every time multiplied by Scale
// (0.1 replays ten times faster). A turn is never sent before the
// session's previous answer ended: when its trace time comes first, it
// goes as soon as the answer ends, and the wait shows as client wait.
//
// Sessions are expected in order of their first timestamps (trace
// sources yield them so); one that is earlier than a session before it
// starts at once, late by the difference. A session whose first turn
// has no timestamp starts with the session before it; a later turn
// without one (a tool result) is ready its think time after the
// previous answer, as in Rate.
type Trace struct {
	Scale float64 // > 0; 1 is the trace's own speed
}

var _ Schedule = Trace{}

// Name implements Schedule.
func (Trace) Name() string { return "trace" }

// Validate implements Schedule.
func (tr Trace) Validate() error {
	if tr.Scale < 0 || math.IsNaN(tr.Scale) || math.IsInf(tr.Scale, 0) {
		return fmt.Errorf("time scale: %g; want a factor above 0", tr.Scale)
	}
	return nil
}

// Users implements Schedule: sessions arrive.
func (Trace) Users() int { return 0 }

// Active implements Schedule: each session is its own user.
func (Trace) Active(int) int { return 1 }

// Arrivals implements Schedule.
func (tr Trace) Arrivals() Arrivals { return &traceArrivals{scale: tr.scale()} }

// TurnAt implements Schedule.
func (tr Trace) TurnAt(t Turn) time.Duration {
	if t.Index == 0 || !t.HasTrace || !t.HasFirstTrace {
		return afterThink(t)
	}
	return t.Start + scaled(t.Trace-t.FirstTrace, tr.scale())
}

func (tr Trace) scale() float64 {
	if tr.Scale <= 0 {
		return 1
	}
	return tr.Scale
}

// scaled is d×f, saturated at the largest Duration (a float beyond
// int64 converts to an arbitrary value: a far time was sent at once).
func scaled(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(x)
}

type traceArrivals struct {
	scale     float64
	origin    time.Duration // first trace time seen
	hasOrigin bool
	last      time.Duration // start of the previous session
}

// Next implements Arrivals.
func (a *traceArrivals) Next(first Turn) (time.Duration, bool) {
	if !first.HasTrace {
		return a.last, true
	}
	if !a.hasOrigin {
		a.origin, a.hasOrigin = first.Trace, true
	}
	a.last = max(scaled(first.Trace-a.origin, a.scale), 0)
	return a.last, true
}
