package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Level is one stage of a Staged schedule: a load level held for
// Duration, whose first Warmup is not measured.
type Level struct {
	Level    float64 // closed-loop clients, or new sessions a second
	Duration time.Duration
	Warmup   time.Duration
}

// Staged holds several load levels one after another in one run, without
// draining between them: sessions in flight at a stage boundary go on to
// their end, and new sessions start at the new level.
//
// With closed lanes (Rate false) a level is a number of lanes: there are
// as many lanes as the highest level, and lane u takes new sessions only
// while u is below the current stage's level; a lane above it finishes
// the session it has and then waits for a stage that needs it. Without
// Gap a lane is a closed-loop client: a later turn is ready its think
// time after the previous answer. With Gap a lane is a user-centric user
// (UserGap): in a stage of N users starting at T, user u sends at
// T + u·Gap/N + k·Gap (see TurnAt).
//
// With Lanes (closed lanes, no Gap), a level is active sessions: Lanes
// closed-loop clients share the current stage's level of sessions as
// Closed spreads its Sessions over its Clients, so the clients stay and
// the working set of conversations they alternate between grows or
// shrinks (ActiveAt). A lane over its new share finishes the sessions it
// has before it takes another.
//
// With Rate, a level is new sessions a second and arrivals follow each
// stage's rate from the stage's start (constant spacing, or Poisson
// drawn from Seed), so the arrival times are a function of the seed and
// the levels alone; later turns are ready their think time after the
// previous answer.
//
// A turn belongs to the stage its intended send time falls in (StageAt),
// numbered from First (1 when 0); after the last stage it belongs to the
// last. The schedule ends at End: no session starts after it.
//
// Every time is a function of the levels, the seed and a lane's global
// index, so a run split over processes (package segment) keeps the
// whole run's stages: a process running some of the lanes runs, in each
// stage, those of its lanes below the level, and one firing some of the
// arrivals fires them at their global times.
type Staged struct {
	Rate bool
	// Gap, above 0 with closed lanes, makes the levels user-centric
	// users, each sending a turn every Gap.
	Gap     time.Duration
	Levels  []Level
	Poisson bool
	Seed    uint64
	First   int
	// Lanes, above 0 with closed lanes, makes the levels active sessions
	// spread over Lanes lanes.
	Lanes int
}

// Quota is a Schedule whose closed lanes' share of sessions changes over
// time (Staged with Lanes).
type Quota interface {
	// ActiveAt returns how many sessions lane user keeps in progress at
	// at; 0 after the schedule's end.
	ActiveAt(user int, at time.Duration) int
}

// Gated is a Schedule whose closed lanes take new sessions only at some
// times (Staged).
type Gated interface {
	// Open returns the earliest time from at on when lane user may take
	// a new session; ok is false when it never may again.
	Open(user int, at time.Duration) (from time.Duration, ok bool)
}

// Stager is a Schedule made of stages (Staged).
type Stager interface {
	// StageAt returns the number of the stage a turn intended at at
	// belongs to, and whether at is in that stage's warmup.
	StageAt(at time.Duration) (stage int, warmup bool)
	// End is when the last stage ends.
	End() time.Duration
}

// Users implements Schedule: the highest level's lanes, or 0 (arrivals).
func (s Staged) Users() int {
	if s.Rate {
		return 0
	}
	if s.Lanes > 0 {
		return s.Lanes
	}
	n := 1
	for _, l := range s.Levels {
		n = max(n, int(l.Level))
	}
	return n
}

// Active implements Schedule: a lane works on one session at a time, or
// with Lanes on its share of the highest level.
func (s Staged) Active(user int) int {
	n := 1
	if s.Lanes > 0 {
		for _, l := range s.Levels {
			n = max(n, s.share(user, l.Level))
		}
	}
	return n
}

// share is lane user's part of level active sessions (Lanes > 0).
func (s Staged) share(user int, level float64) int {
	return Closed{Clients: s.Lanes, Sessions: int(level)}.Active(user)
}

// ActiveAt implements Quota: lane user's share of the level of the stage
// at falls in; 1 without Lanes; 0 from End on.
func (s Staged) ActiveAt(user int, at time.Duration) int {
	var start time.Duration
	for _, l := range s.Levels {
		start += l.Duration
		if at < start {
			if s.Lanes > 0 {
				return s.share(user, l.Level)
			}
			return 1
		}
	}
	return 0
}

// TurnAt implements Schedule: after the think time for clients and
// rates, the lane's slot for users (Gap > 0).
//
// A user's first turn is at its first slot; a later one at its first
// slot at least Gap after its previous turn, so a user never sends
// faster than its gap and, at a boundary, moves to the new stage's
// stagger within two gaps (a stage's warmup should cover them). A user
// above the current level goes on with the session it has, one turn
// every Gap after its previous one, and the first turn of a new session
// waits for the next stage that needs the user.
func (s Staged) TurnAt(t Turn) time.Duration {
	if s.Rate || s.Gap <= 0 {
		return afterThink(t)
	}
	var earliest time.Duration
	if t.LaneTurn > 0 {
		earliest = t.Prev + s.Gap
	}
	var start time.Duration
	for i, l := range s.Levels {
		end, last := start+l.Duration, i == len(s.Levels)-1
		switch {
		case earliest >= end && !last:
		case float64(t.User) < l.Level:
			// The lane's grid in this stage: phase + k·Gap.
			phase := start + time.Duration(t.User)*s.Gap/time.Duration(l.Level)
			slot := phase
			if from := max(earliest, start); from > phase {
				slot += (from - phase + s.Gap - 1) / s.Gap * s.Gap
			}
			if slot < end || last {
				return slot
			}
		case t.Index > 0:
			return earliest // the session in progress carries over
		}
		start = end
	}
	return max(earliest, s.End())
}

// End implements Stager.
func (s Staged) End() time.Duration {
	var end time.Duration
	for _, l := range s.Levels {
		end += l.Duration
	}
	return end
}

// StageAt implements Stager.
func (s Staged) StageAt(at time.Duration) (int, bool) {
	first := s.First
	if first == 0 {
		first = 1
	}
	var start time.Duration
	for i, l := range s.Levels {
		if at < start+l.Duration || i == len(s.Levels)-1 {
			return first + i, at >= start && at < start+l.Warmup
		}
		start += l.Duration
	}
	return first, false
}

// Open implements Gated: the start of the first stage from at on whose
// level is above user.
func (s Staged) Open(user int, at time.Duration) (time.Duration, bool) {
	var start time.Duration
	for _, l := range s.Levels {
		end := start + l.Duration
		if at < end && (s.Lanes > 0 || float64(user) < l.Level) {
			return max(at, start), true
		}
		start = end
	}
	return 0, false
}

// Arrivals implements Schedule: each stage's rate from its start, none
// after End; nil for closed lanes.
func (s Staged) Arrivals() Arrivals {
	if !s.Rate {
		return nil
	}
	a := &stagedArrivals{s: s}
	if s.Poisson {
		a.rng = rand.New(rand.NewPCG(s.Seed, rateStream))
	}
	return a
}

type stagedArrivals struct {
	s     Staged
	rng   *rand.Rand
	k     int           // current stage
	start time.Duration // its start
	i     int           // arrivals in it so far
	last  float64       // offset of the previous arrival in it (ns)
}

// Next implements Arrivals. Within a stage, constant spacing puts
// arrival i at i intervals from the stage's start; Poisson adds an
// exponential gap to the previous arrival. An arrival that would fall
// in the next stage is dropped and that stage starts with an arrival at
// its start (Poisson gaps are memoryless, so this is exact for them).
func (a *stagedArrivals) Next(Turn) (time.Duration, bool) {
	for a.k < len(a.s.Levels) {
		l := a.s.Levels[a.k]
		interval := float64(time.Second) / l.Level
		at := 0.0
		switch {
		case a.i == 0:
		case a.rng != nil:
			at = a.last + a.rng.ExpFloat64()*interval
		default:
			at = float64(a.i) * interval
		}
		if at < float64(l.Duration) {
			a.i++
			a.last = at
			return a.start + time.Duration(at), true
		}
		a.start += l.Duration
		a.k++
		a.i, a.last = 0, 0
	}
	return 0, false
}

var _ Schedule = Staged{}

// Name implements Schedule.
func (Staged) Name() string { return "stages" }

// Validate implements Schedule: it reports the first invalid level of s.
func (s Staged) Validate() error {
	switch {
	case len(s.Levels) == 0:
		return fmt.Errorf("stages: none given")
	case s.Gap < 0 || s.Rate && s.Gap > 0:
		return fmt.Errorf("stages: gap %s; want a gap above 0 for users stages only", s.Gap)
	case s.Lanes < 0 || s.Lanes > 0 && (s.Rate || s.Gap > 0):
		return fmt.Errorf("stages: %d lanes; want lanes for active stages of closed-loop clients only", s.Lanes)
	}
	for i, l := range s.Levels {
		switch {
		case !(l.Level > 0) || math.IsInf(l.Level, 0):
			return fmt.Errorf("stage %d: level %g; want a number above 0", i+1, l.Level)
		case !s.Rate && l.Level != math.Trunc(l.Level):
			return fmt.Errorf("stage %d: %g %s; want a whole number", i+1, l.Level, s.kind())
		case l.Duration <= 0:
			return fmt.Errorf("stage %d: duration %s; want a duration above 0", i+1, l.Duration)
		case s.Lanes > 0 && int(l.Level) < s.Lanes:
			return fmt.Errorf("stage %d: %g active sessions for %d clients; want at least one session per client", i+1, l.Level, s.Lanes)
		case l.Warmup < 0 || l.Warmup >= l.Duration:
			return fmt.Errorf("stage %d: warmup %s; want at least 0 and less than the stage's %s", i+1, l.Warmup, l.Duration)
		}
	}
	return nil
}

// kind names what the levels count.
func (s Staged) kind() string {
	switch {
	case s.Rate:
		return "sessions a second"
	case s.Gap > 0:
		return "users"
	case s.Lanes > 0:
		return "active sessions"
	}
	return "clients"
}
