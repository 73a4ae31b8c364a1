// Package schedule says when a replay sends its work: when each session
// starts and when each of its turns may be sent. A Schedule is pure: the
// same seed and inputs give the same times (no timers, no clock reads),
// so it is tested without sleeping, and a segment of a run can compute
// the global plan and keep its own sessions. The replay runner only
// executes a schedule.
//
// Times are offsets from the run's start. A schedule gives intended send
// times; the runner sends a turn at its intended time or, when the
// session's previous answer is still streaming then, as soon as it ends
// (each session has one request in flight). The difference is recorded
// as client wait (record client_wait_ns), so a schedule the server cannot
// keep up with shows as waiting rather than as a quietly slower load.
//
// Implementations:
//
//   - Closed: closed-loop users (vLLM's model): Clients users, each
//     alternating between its share of Active sessions; a turn is ready
//     its think time after the previous answer ended.
//   - Rate: open-loop arrivals, constant or Poisson; each session is its
//     own user, with think times between its turns.
//   - Trace: the trace clock: sessions and turns at their trace
//     timestamps (conv.Message.TimestampMs), scaled.
//   - UserGap: user-centric fixed gaps (AIPerf's and LMCache's model):
//     each of N users sends a turn every gap, staggered.
//   - Staged: several levels of clients, of user-centric users or of a
//     rate one after another in one run, without draining between them
//     (mtrun --stages).
//   - Requests: inference-perf's stages of request rates, each request
//     at a planned time.
//
// A new schedule is one file plus its tests: a type that implements
// Schedule (Name and Validate included), with a compile-time check
// (var _ Schedule = X{}) beside it; optional behaviour is the Stager,
// Quota and Gated interfaces.
package schedule

import (
	"math/rand/v2"
	"time"
)

// Schedule is a load shape.
type Schedule interface {
	// Users is the number of closed lanes: each lane sends one request
	// at a time and takes sessions from the source one after another.
	// 0 means sessions arrive on their own (see Arrivals).
	Users() int
	// Active returns how many sessions lane user keeps in progress at
	// once (for Users() > 0); the lane alternates between them.
	Active(user int) int
	// Arrivals returns a fresh iterator over session start offsets, for
	// schedules with Users() == 0; nil otherwise.
	Arrivals() Arrivals
	// TurnAt returns when a turn may be sent (its intended send time).
	// For the first turn of a session (Index 0) of a closed lane, Start
	// is when the lane took the session.
	TurnAt(t Turn) time.Duration
	// Name is the schedule's name in the run manifest (settings
	// "schedule"): closed, rate, trace, users, stages, inference-perf.
	Name() string
	// Validate reports the first invalid setting (a rate that is not
	// above 0, a user-centric schedule without users or gap, a negative
	// time scale, a stage without level or duration), or nil.
	Validate() error
}

// Arrivals yields session start offsets in order of the sessions' global
// indexes 0, 1, 2, ... An Arrivals is used by one goroutine.
type Arrivals interface {
	// Next returns the start offset of the next session, whose first turn
	// is first (first.Session is its global index; first.Trace its trace
	// time, if any); ok is false when no session arrives any more.
	Next(first Turn) (at time.Duration, ok bool)
}

// Turn is what a schedule knows about a turn about to be sent.
type Turn struct {
	User     int // lane (closed lanes) or session index (arrivals)
	Session  int // global index of the session
	Index    int // turn index within the session, from 0
	LaneTurn int // turns the lane sent before this one
	// Prev is the intended send time of the lane's previous turn, of
	// whichever session (closed lanes, LaneTurn > 0).
	Prev    time.Duration
	Start   time.Duration // the session's start offset
	PrevEnd time.Duration // end of the session's previous turn (Index > 0)
	Think   time.Duration // think time drawn for this turn (Index > 0)
	// Trace is the turn's own timestamp in the input (conv.Message
	// TimestampMs, relative to the trace's first request); HasTrace is
	// false when the input has none.
	Trace    time.Duration
	HasTrace bool
	// FirstTrace is the trace timestamp of the session's first turn;
	// HasFirstTrace is false when it has none.
	FirstTrace    time.Duration
	HasFirstTrace bool
}

// afterThink is the default turn time: the session's start for its first
// turn, else the previous answer's end plus the think time.
func afterThink(t Turn) time.Duration {
	if t.Index == 0 {
		return t.Start
	}
	return t.PrevEnd + t.Think
}

// sessionStream separates per-session draws from every other use of the
// seed.
const sessionStream = 0x73657373696f6e

// SessionRand returns the random source of one session (think times),
// seeded by the run's seed and the session's global index: a session's
// draws do not depend on which other sessions ran, or in what order, so
// a segment of a run draws what the whole run would have.
func SessionRand(seed uint64, session int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, sessionStream^uint64(session)*0x9e3779b97f4a7c15))
}
