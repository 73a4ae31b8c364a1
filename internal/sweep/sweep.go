package sweep

import (
	"math"
	"slices"
	"time"
)

// Result is what one stage measured over its window after warmup.
type Result struct {
	Stage Stage
	// Throughput is successful requests per second.
	Throughput float64
	// FirstHalf and SecondHalf are the throughput of the two halves of
	// the window (steadiness).
	FirstHalf, SecondHalf float64
	// LatenessP99 is the 99th percentile of how late the generator sent
	// requests once they were due and their client free (record
	// lateness_ns). ClientWaitKnown says the records kept the wait for a
	// free client apart (client_wait_ns); before that, lateness_ns
	// included it. ClientWaitP99 is the 99th percentile of that wait
	// (0 when not known).
	LatenessP99     time.Duration
	ClientWaitKnown bool
	ClientWaitP99   time.Duration
	// Failed is the share of requests that failed.
	Failed float64
	// MeetsSLO says every objective held over the window (true when there
	// are none).
	MeetsSLO bool
	// Retention is what an active stage measured of the server's cache.
	Retention Retention
}

// Criteria are the thresholds of the judgements on a Result.
type Criteria struct {
	// Unsteady is how much the two halves' throughputs may differ,
	// relative to their mean, before a stage is unsteady (default 0.15).
	Unsteady float64
	// Late is the lateness p99 above which the client, not the server,
	// could not hold the level (default 100ms).
	Late time.Duration
	// Plateau is the share of the low-load throughput per unit of load
	// below which a stage is past the knee (default 0.85).
	Plateau float64
	// TTFTStep is how many times the lowest stage's TTFT p50 the highest
	// must reach before an active sweep judged on TTFT sees a step
	// (default 2).
	TTFTStep float64
}

func (c Criteria) withDefaults() Criteria {
	if c.Unsteady <= 0 {
		c.Unsteady = 0.15
	}
	if c.Late <= 0 {
		c.Late = 100 * time.Millisecond
	}
	if c.Plateau <= 0 {
		c.Plateau = 0.85
	}
	if c.TTFTStep <= 1 {
		c.TTFTStep = 2
	}
	return c
}

// Steady reports whether the two halves of the stage's window had
// throughputs within Unsteady of each other: a level the server holds
// gives the same throughput throughout; one it cannot hold (an open-loop
// rate above capacity) does not.
func (c Criteria) Steady(r Result) bool {
	c = c.withDefaults()
	mean := (r.FirstHalf + r.SecondHalf) / 2
	return mean > 0 && math.Abs(r.FirstHalf-r.SecondHalf) <= c.Unsteady*mean
}

// ClientLimited reports whether the generator could not send on time
// (lateness p99 above Late): such a stage says nothing about the server
// and must not be read as its saturation. Lateness leaves out the time a
// due turn waited for its client (a client serves an active stage's
// conversations one request at a time; a user's turn waits for the
// previous answer), which is the load's shape and grows when the server
// saturates. Records that did not keep that wait apart (!ClientWaitKnown)
// have it in their lateness, so their users and active stages are not
// judged (their saturation shows in throughput, steadiness and the
// objectives).
func (c Criteria) ClientLimited(r Result) bool {
	if !r.ClientWaitKnown && (r.Stage.Kind == Users || r.Stage.Kind == Active) {
		return false
	}
	return r.LatenessP99 > c.withDefaults().Late
}

// Holds reports whether the server held the stage: steady, no failures,
// every objective met, and not client-limited.
func (c Criteria) Holds(r Result) bool {
	return r.Failed == 0 && r.MeetsSLO && c.Steady(r) && !c.ClientLimited(r)
}

// Knee estimates the saturation point of results at increasing levels of
// one kind: the level where the line of the lowest level's throughput per
// unit of load meets the plateau of the highest throughput measured
// (operational analysis' asymptotic bound: with N closed-loop users of
// response time R and a server that completes at most X requests/s, the
// throughput is N/R below N* = X·R and X above). ok is false until some
// stage is past the knee (its throughput per unit of load below Plateau
// times the lowest level's), since before that the plateau is unknown.
// Client-limited stages are left out.
func (c Criteria) Knee(rs []Result) (level float64, ok bool) {
	c = c.withDefaults()
	var use []Result
	for _, r := range rs {
		if !c.ClientLimited(r) && r.Throughput > 0 {
			use = append(use, r)
		}
	}
	if len(use) < 2 {
		return 0, false
	}
	slices.SortFunc(use, func(a, b Result) int { return cmpFloat(a.Stage.Level, b.Stage.Level) })
	low := use[0].Throughput / use[0].Stage.Level
	best, past := 0.0, false
	for _, r := range use {
		best = max(best, r.Throughput)
		if r.Throughput/r.Stage.Level < c.Plateau*low {
			past = true
		}
	}
	if !past {
		return 0, false
	}
	return best / low, true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
