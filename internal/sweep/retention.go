package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Retention is what an active stage measured of the server's prefix
// cache over its later turns (every turn after a conversation's first:
// the ones that find, or not, their conversation's previous context in
// the cache).
type Retention struct {
	// LaterTurns counts the stage's measured later turns.
	LaterTurns int
	// WorkingSetTokens is the tokens the stage's active conversations
	// hold: the level times the mean context (prompt + completion tokens)
	// of the later turns.
	WorkingSetTokens float64
	// HitShare is the later turns' cached prompt tokens over their prompt
	// tokens; NaN when the server reported no cached tokens.
	HitShare float64
	// TTFTP50 is the later turns' median time to first token.
	TTFTP50 time.Duration
	// Tiered says the server's metrics split prefix-cache hits into a
	// local and an external tier (vLLM's prefix_cache_hits and
	// external_prefix_cache_hits); LocalHitTokens and ExternalHitTokens
	// are the hits of each over the stage, in tokens.
	Tiered                            bool
	LocalHitTokens, ExternalHitTokens float64
}

// Basis names what retention is judged on: the cached tokens the server
// reports, or, when it reports none, the time to first token.
type Basis string

// Bases of a retention judgement.
const (
	BasisCached Basis = "cached_tokens"
	BasisTTFT   Basis = "ttft"
)

// RetentionBasis returns BasisCached when every stage with later turns
// has a hit share, else BasisTTFT.
func RetentionBasis(rs []Result) Basis {
	for _, r := range rs {
		if r.Retention.LaterTurns > 0 && math.IsNaN(r.Retention.HitShare) {
			return BasisTTFT
		}
	}
	return BasisCached
}

// retainedScores gives each result a score in which 0.5 is the knee:
// the hit share with BasisCached; with BasisTTFT, where the stage's TTFT
// p50 falls between the lowest and the highest of the sweep, 1 at the
// lowest and 0 at the highest, so 0.5 is the midpoint of the step. The
// step counts only when the highest is at least TTFTStep times the
// lowest; until then every stage scores 1 (no step seen). A stage
// without later turns scores NaN.
func (c Criteria) retainedScores(rs []Result) ([]float64, Basis) {
	c = c.withDefaults()
	basis := RetentionBasis(rs)
	out := make([]float64, len(rs))
	lo, hi := math.Inf(1), 0.0
	for _, r := range rs {
		if r.Retention.LaterTurns > 0 && r.Retention.TTFTP50 > 0 {
			t := float64(r.Retention.TTFTP50)
			lo, hi = min(lo, t), max(hi, t)
		}
	}
	for i, r := range rs {
		switch {
		case r.Retention.LaterTurns == 0:
			out[i] = math.NaN()
		case basis == BasisCached:
			out[i] = r.Retention.HitShare
		case hi < c.TTFTStep*lo || r.Retention.TTFTP50 <= 0:
			out[i] = 1
		default:
			out[i] = (hi - float64(r.Retention.TTFTP50)) / (hi - lo)
		}
	}
	return out, basis
}

// Retained reports, for each result, whether the server kept the
// stage's working set: its score (hit share, or place on the TTFT step)
// is at least one half. A stage without later turns is not retained.
func (c Criteria) Retained(rs []Result) []bool {
	scores, _ := c.retainedScores(rs)
	out := make([]bool, len(rs))
	for i, s := range scores {
		out[i] = s >= 0.5
	}
	return out
}

// RetentionCapacity is the effective capacity of a cache retention
// analysis (package retention): the reuse distance, in tokens and in
// conversations, at which the cached share of the previous context falls
// below one half; nil when the profile has no step.
type RetentionCapacity struct {
	Basis                 Basis    `json:"basis"`
	CapacityTokens        *float64 `json:"capacity_tokens"`
	CapacityConversations *float64 `json:"capacity_conversations"`
}

// RetentionKnee is where an active sweep's working set fell off the
// server's cache: the level (active conversations) and working set
// (tokens) at which the score crosses one half, interpolated linearly
// between the highest level at or above it and the next level below.
type RetentionKnee struct {
	Level            float64
	WorkingSetTokens float64
	Basis            Basis
}

// RetentionKnee returns the retention knee of active results, ok false when no
// stage fell below one half or none stayed at or above it below that.
func (c Criteria) RetentionKnee(rs []Result) (RetentionKnee, bool) {
	scores, basis := c.retainedScores(rs)
	type pt struct{ level, ws, score float64 }
	var pts []pt
	for i, r := range rs {
		if !math.IsNaN(scores[i]) {
			pts = append(pts, pt{r.Stage.Level, r.Retention.WorkingSetTokens, scores[i]})
		}
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmpFloat(a.level, b.level) })
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if a.score >= 0.5 && b.score < 0.5 {
			f := (a.score - 0.5) / (a.score - b.score)
			return RetentionKnee{Level: a.level + f*(b.level-a.level), WorkingSetTokens: a.ws + f*(b.ws-a.ws), Basis: basis}, true
		}
	}
	return RetentionKnee{Basis: basis}, false
}

// retentionBracket returns the highest retained level below the lowest
// level not retained, and whether such a level exists (lo is 0 when
// nothing below it was retained). A stage without later turns tells
// neither.
func (c Criteria) retentionBracket(rs []Result) (lo, hi float64, ok bool) {
	scores, _ := c.retainedScores(rs)
	hi = math.Inf(1)
	for i, r := range rs {
		if scores[i] < 0.5 {
			hi = min(hi, r.Stage.Level)
		}
	}
	if math.IsInf(hi, 1) {
		return 0, 0, false
	}
	for i, r := range rs {
		if scores[i] >= 0.5 && r.Stage.Level < hi {
			lo = max(lo, r.Stage.Level)
		}
	}
	return lo, hi, true
}

// nextActive plans an active sweep (Planner.Next with Kind Active): ramp
// the active conversations up by Factor from Start (at least Clients)
// until a stage's working set is not retained or Max is reached, then
// bisect between the highest level retained and the lowest not, down to
// one conversation or Tolerance. Each stage lasts long enough for every
// conversation to come back Returns times after a warmup of one round
// (see activeTiming).
func (p Planner) nextActive(done []Result) (Stage, bool) {
	floor := float64(max(p.Clients, 1))
	stage := func(level float64) (Stage, bool) {
		level = math.Max(math.Round(level), floor)
		for _, r := range done {
			if r.Stage.Level == level {
				return Stage{}, false
			}
		}
		dur, warm := p.activeTiming(level, done)
		return Stage{Kind: Active, Level: level, Duration: dur, Warmup: warm}, true
	}
	if len(done) == 0 {
		return stage(math.Max(p.Start, floor))
	}
	last := done[len(done)-1]
	lo, hi, bracketed := p.Criteria.retentionBracket(done)
	if !bracketed {
		if p.Max > 0 && last.Stage.Level >= p.Max {
			return Stage{}, false
		}
		next := last.Stage.Level * p.Factor
		if p.Max > 0 {
			next = min(next, p.Max)
		}
		return stage(next)
	}
	if hi-lo <= 1 || lo > 0 && hi <= lo*(1+p.Tolerance) {
		return Stage{}, false
	}
	if lo == 0 {
		// Even the first level was not retained: go down.
		lowest := p.lowestRun(done)
		if lowest <= floor {
			return Stage{}, false
		}
		return stage(lowest / p.Factor)
	}
	return stage(math.Sqrt(lo * hi))
}

// activeTiming returns the duration and warmup of an active stage at
// level: at least the Planner's, and, once a stage has measured the
// server's throughput X (requests a second), a warmup of one round
// (level / X: the time every conversation takes to come back once, so
// that the measured window starts with each conversation's context sent)
// and Returns rounds after it, so that the measured later turns come
// from conversations that came back.
func (p Planner) activeTiming(level float64, done []Result) (dur, warm time.Duration) {
	dur, warm = p.Duration, p.Warmup
	if len(done) == 0 {
		return dur, warm
	}
	x := done[len(done)-1].Throughput
	if !(x > 0) {
		return dur, warm
	}
	round := time.Duration(level / x * float64(time.Second)).Round(time.Millisecond)
	warm = max(warm, round)
	dur = max(dur, warm+time.Duration(p.Returns)*round)
	return dur, warm
}

// judgeActive sums up an active sweep: the capacity is the highest level
// whose working set was retained, Failed the lowest above it that was
// not, and the knee the interpolated level (and working set) where the
// score crosses one half.
func (c Criteria) judgeActive(out Capacity, rs []Result) Capacity {
	lo, hi, bracketed := c.retentionBracket(rs)
	kept := c.Retained(rs)
	if bracketed {
		out.Failed = &hi
	} else {
		for i, r := range rs {
			if kept[i] {
				lo = max(lo, r.Stage.Level)
			}
		}
	}
	out.Capacity = lo
	k, ok := c.RetentionKnee(rs)
	out.Basis = k.Basis
	if ok {
		out.Knee, out.KneeWorkingSetTokens = &k.Level, &k.WorkingSetTokens
	}
	for i, r := range rs {
		ret := r.Retention
		j := Judged{Stage: i + 1, Kind: r.Stage.Kind, Level: r.Stage.Level, Throughput: r.Throughput, Steady: c.Steady(r),
			ClientLimited: c.ClientLimited(r), MeetsSLO: r.MeetsSLO, Failed: r.Failed, Holds: kept[i]}
		if ret.LaterTurns > 0 {
			ws, ttft := ret.WorkingSetTokens, float64(ret.TTFTP50)/1e6
			j.LaterTurns, j.WorkingSetTokens, j.TTFTP50Ms = &ret.LaterTurns, &ws, &ttft
			if !math.IsNaN(ret.HitShare) {
				hs := ret.HitShare
				j.HitShare = &hs
			}
		}
		if ret.Tiered {
			l, e := ret.LocalHitTokens, ret.ExternalHitTokens
			j.LocalHitTokens, j.ExternalHitTokens = &l, &e
		}
		out.ClientLimited = out.ClientLimited || j.ClientLimited
		out.Stages = append(out.Stages, j)
	}
	return out
}

// activeLine is Capacity.Line for an active sweep.
func (c Capacity) activeLine() string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	ws := func(level float64) string {
		for _, j := range c.Stages {
			if j.Level == level && j.WorkingSetTokens != nil {
				return fmt.Sprintf(" (%s tokens)", strconv.FormatFloat(math.Round(*j.WorkingSetTokens), 'f', 0, 64))
			}
		}
		return ""
	}
	s := fmt.Sprintf("working set retained up to %s active conversations%s", g(c.Capacity), ws(c.Capacity))
	if c.Failed != nil {
		s += fmt.Sprintf(", not at %s%s", g(*c.Failed), ws(*c.Failed))
	} else {
		s += " (a lower bound: every level tried was retained)"
	}
	if c.Knee != nil && c.KneeWorkingSetTokens != nil {
		s += fmt.Sprintf("; knee at %s conversations, %s tokens", g(*c.Knee), strconv.FormatFloat(math.Round(*c.KneeWorkingSetTokens), 'f', 0, 64))
	} else {
		s += "; knee not reached"
	}
	s += fmt.Sprintf(" (basis %s)", c.Basis)
	if r := c.Retention; r != nil && r.CapacityTokens != nil && r.CapacityConversations != nil {
		s += fmt.Sprintf("; effective capacity by reuse distance %s tokens, %s conversations (basis %s)",
			strconv.FormatFloat(math.Round(*r.CapacityTokens), 'f', 0, 64), g(*r.CapacityConversations), r.Basis)
	}
	return s
}
