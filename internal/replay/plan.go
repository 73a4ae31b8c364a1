package replay

import (
	"math/rand/v2"
	"time"

	"github.com/mtkit/mtkit/internal/schedule"
)

// sessionPlan is what the schedule knows of a session.
type sessionPlan struct {
	index int           // global index: order taken from the source
	start time.Duration // start offset
	// firstTrace is the trace time of the session's first turn.
	firstTrace    time.Duration
	hasFirstTrace bool
	rng           *rand.Rand // think-time draws (made on first use)
}

// Shape returns the load shape of the options: Schedule when set, else
// DefaultClients closed-loop user.
func (o *Options) Shape() schedule.Schedule {
	if o.Schedule != nil {
		return o.Schedule
	}
	return schedule.Closed{Clients: DefaultClients}
}

// turn describes the session's current turn (prepared) to the schedule;
// laneTurn is the number of turns its lane sent before, prev the
// intended time of the last of them.
func (r *runner) turn(s *session, laneTurn int, prev time.Duration) schedule.Turn {
	p := &s.plan
	t := schedule.Turn{
		User: s.client, Session: p.index, Index: s.turn, LaneTurn: laneTurn, Prev: prev,
		Start: p.start, PrevEnd: p.start,
	}
	if ts := s.cur.user.TimestampMs; ts != nil {
		t.Trace, t.HasTrace = time.Duration(*ts*float64(time.Millisecond)), true
	}
	if t.Index == 0 {
		p.firstTrace, p.hasFirstTrace = t.Trace, t.HasTrace
	}
	t.FirstTrace, t.HasFirstTrace = p.firstTrace, p.hasFirstTrace
	if !s.lastEnd.IsZero() {
		t.PrevEnd = s.lastEnd.Sub(r.anchor)
		if p.rng == nil {
			p.rng = schedule.SessionRand(r.o.RandSeed, p.index)
		}
		planned := time.Duration(s.cur.user.ThinkTimeMs * float64(time.Millisecond))
		t.Think = r.o.Think(planned, p.rng)
	}
	return t
}

// plan sets when the session's current turn may be sent (s.ready) and
// the think time that leaves after the previous answer (s.think).
func (r *runner) plan(s *session, laneTurn int, prev time.Duration) {
	s.ready = r.anchor.Add(r.sched.TurnAt(r.turn(s, laneTurn, prev)))
	s.think = 0
	if !s.lastEnd.IsZero() {
		s.think = max(s.ready.Sub(s.lastEnd), 0)
	}
}
