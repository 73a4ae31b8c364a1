// Package schedule says when a replay sends its work: when each session
// starts and when each of its turns may be sent. A Schedule is pure: the
// same seed and inputs give the same times, so it is tested without
// timers, and a segment of a run can compute the global plan and keep
// its own sessions. The replay runner only executes a schedule.
package schedule

import "time"

// Schedule is a load shape. Times are offsets from the run's start.
type Schedule interface {
	// Users is the number of closed lanes: each lane sends one request
	// at a time and takes sessions from the source one after another.
	// 0 means sessions arrive on their own (see Arrivals).
	Users() int
	// Arrivals returns the start offsets of sessions 0, 1, 2, ... (global
	// indexes), for schedules with Users() == 0; nil otherwise.
	Arrivals() Arrivals
	// TurnAt returns when a turn may be sent (its intended send time).
	TurnAt(t Turn) time.Duration
}

// Arrivals yields session start offsets in order.
type Arrivals interface {
	// Next returns the start offset of the next session; ok is false when
	// no session arrives any more.
	Next() (at time.Duration, ok bool)
}

// Turn is what a schedule knows about a turn about to be sent.
type Turn struct {
	User     int           // lane (closed lanes) or session index (arrivals)
	Session  int           // global index of the session
	Index    int           // turn index within the session, from 0
	LaneTurn int           // turns the lane sent before this one
	Start    time.Duration // the session's start offset
	PrevEnd  time.Duration // end of the session's previous turn (Index > 0)
	Think    time.Duration // think time drawn for this turn (Index > 0)
	// Trace is the turn's own timestamp in the input (conv.Message
	// TimestampMs, relative to the trace's first request); HasTrace is
	// false when the input has none.
	Trace    time.Duration
	HasTrace bool
}
