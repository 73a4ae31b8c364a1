package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Planner chooses the stages of a sweep one at a time, from the results
// of the stages before.
//
// It ramps the level up by Factor from Start until a stage does not hold
// (Criteria.Holds: a failure, an objective missed, unsteady) or is past
// the knee, or Max is reached. With objectives it then bisects between
// the highest level that held and the lowest that did not, until they are
// within Tolerance of each other: the capacity is the level that held,
// the one that did not bounds it. Without objectives it fills the range
// from Start to the knee with Fill evenly spaced levels, so the curve of
// throughput against latency can be drawn. A client-limited stage ends
// the sweep: the client could not go further.
//
// An Active sweep is planned on retention instead (see nextActive): its
// levels are active conversations of Clients fixed clients, and a stage
// holds when the server kept its working set in cache.
type Planner struct {
	Kind      Kind
	Start     float64 // first level (default 1)
	Max       float64 // highest level tried (0: none)
	Factor    float64 // ramp factor (default 2)
	Tolerance float64 // bisection stops when hi <= lo*(1+Tolerance) (default 0.1)
	Fill      int     // levels placed below the knee without objectives (default 4)
	MaxStages int     // stages in all (default 12)
	Duration  time.Duration
	Warmup    time.Duration
	// Clients is the fixed number of clients of an Active sweep: no level
	// goes below it.
	Clients int
	// Returns is how many times each conversation of an Active stage
	// comes back after the warmup (default 4).
	Returns int
	// Objectives says whether stages are judged against objectives (bisect
	// for the capacity) or not (find the knee and fill).
	Objectives bool
	Criteria   Criteria
}

func (p Planner) withDefaults() Planner {
	if p.Start <= 0 {
		p.Start = 1
	}
	if p.Factor <= 1 {
		p.Factor = 2
	}
	if p.Tolerance <= 0 {
		p.Tolerance = 0.1
	}
	if p.Fill <= 0 {
		p.Fill = 4
	}
	if p.MaxStages <= 0 {
		p.MaxStages = 12
	}
	if p.Returns <= 0 {
		p.Returns = 4
	}
	return p
}

// Next returns the next stage after done (in the order they ran), or
// false when the sweep is over.
func (p Planner) Next(done []Result) (Stage, bool) {
	p = p.withDefaults()
	if len(done) >= p.MaxStages {
		return Stage{}, false
	}
	if p.Kind == Active {
		return p.nextActive(done)
	}
	stage := func(level float64) (Stage, bool) {
		if p.Kind.integral() {
			level = math.Round(level)
		}
		for _, r := range done {
			if r.Stage.Level == level {
				return Stage{}, false // nothing new to learn
			}
		}
		return Stage{Kind: p.Kind, Level: level, Duration: p.Duration, Warmup: p.Warmup}, true
	}
	if len(done) == 0 {
		return stage(p.Start)
	}
	last := done[len(done)-1]
	c := p.Criteria
	for _, r := range done {
		if c.ClientLimited(r) {
			return Stage{}, false
		}
	}
	lo, hi, bracketed := p.bracket(done)
	_, knee := c.Knee(done)
	ramping := !bracketed && !(knee && !p.Objectives)
	if ramping {
		next := last.Stage.Level * p.Factor
		if p.Max > 0 && last.Stage.Level >= p.Max {
			return Stage{}, false
		}
		if p.Max > 0 {
			next = min(next, p.Max)
		}
		return stage(next)
	}
	if p.Objectives {
		if !bracketed || hi <= lo*(1+p.Tolerance) || (p.Kind.integral() && hi-lo <= 1) {
			return Stage{}, false
		}
		if lo == 0 {
			// Even the first level did not hold: go down.
			return stage(p.lowestRun(done) / p.Factor)
		}
		return stage(math.Sqrt(lo * hi))
	}
	// No objectives: fill levels between Start and the knee.
	kneeLevel, _ := c.Knee(done)
	levels := make([]float64, 0, p.Fill)
	for i := 1; i <= p.Fill; i++ {
		levels = append(levels, p.Start+(kneeLevel-p.Start)*float64(i)/float64(p.Fill))
	}
	for _, l := range levels {
		if s, ok := stage(l); ok && s.Level > 0 {
			return s, true
		}
	}
	return Stage{}, false
}

// bracket returns the highest level that held below the lowest that did
// not, and whether a level that did not hold exists (lo is 0 when none
// held below it).
func (p Planner) bracket(done []Result) (lo, hi float64, ok bool) {
	hi = math.Inf(1)
	for _, r := range done {
		if !p.Criteria.Holds(r) {
			hi = min(hi, r.Stage.Level)
		}
	}
	if math.IsInf(hi, 1) {
		return 0, 0, false
	}
	for _, r := range done {
		if p.Criteria.Holds(r) && r.Stage.Level < hi {
			lo = max(lo, r.Stage.Level)
		}
	}
	return lo, hi, true
}

func (p Planner) lowestRun(done []Result) float64 {
	levels := make([]float64, len(done))
	for i, r := range done {
		levels[i] = r.Stage.Level
	}
	return slices.Min(levels)
}

// Capacity is the outcome of a sweep with objectives: the largest level
// that held and the smallest above it that did not. It is mtrun's and
// mtstats' capacity JSON (docs/mtstats.md).
type Capacity struct {
	Schema string `json:"schema"`
	Kind   Kind   `json:"kind"`
	// Capacity is the largest level that held every objective (0: none).
	Capacity float64 `json:"capacity"`
	// Failed is the smallest level above it that did not hold (null: none
	// did, the capacity is a lower bound).
	Failed *float64 `json:"failed"`
	// Knee is the saturation point (null: not reached).
	Knee *float64 `json:"knee"`
	// ClientLimited says the sweep stopped because the client could not
	// hold a level: the capacity is a lower bound of the server's.
	ClientLimited bool     `json:"client_limited"`
	Objectives    []string `json:"objectives"`
	// Unsteady is the steadiness tolerance the stages were judged with
	// (Criteria.Unsteady).
	Unsteady float64 `json:"unsteady"`
	// Basis is what an active sweep's retention was judged on
	// (cached_tokens or ttft); KneeWorkingSetTokens is the working set at
	// its knee. Both only for active sweeps.
	Basis                Basis    `json:"basis,omitempty"`
	KneeWorkingSetTokens *float64 `json:"knee_working_set_tokens,omitempty"`
	// Retention is the effective capacity of the reuse-distance analysis
	// over all of an active sweep's records (mtstats' cache_retention):
	// finer than the knee, which compares stages by their mean working
	// set while each stage's turns come back from a spread of distances.
	Retention *RetentionCapacity `json:"retention,omitempty"`
	Stages    []Judged           `json:"stages"`
}

// WriteJSON writes c as indented JSON, one line per field, with '<', '>'
// and '&' as themselves: objectives read "ttft_p95<=60ms", not
// "ttft_p95\u003c=60ms" as encoding/json's default escaping writes them.
func (c Capacity) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// Judged is one stage's result and verdicts.
type Judged struct {
	// Stage is the stage's number in the records (its place in the
	// sweep, from 1).
	Stage         int     `json:"stage"`
	Kind          Kind    `json:"kind"`
	Level         float64 `json:"level"`
	Throughput    float64 `json:"throughput"`
	Steady        bool    `json:"steady"`
	ClientLimited bool    `json:"client_limited"`
	MeetsSLO      bool    `json:"meets_slo"`
	Failed        float64 `json:"failed"`
	// Holds is, for an active stage, that its working set was retained.
	Holds bool `json:"holds"`
	// An active stage's later turns (Retention), when it had any.
	LaterTurns       *int     `json:"later_turns,omitempty"`
	WorkingSetTokens *float64 `json:"working_set_tokens,omitempty"`
	HitShare         *float64 `json:"hit_share,omitempty"`
	TTFTP50Ms        *float64 `json:"ttft_p50_ms,omitempty"`
	// Hits per tier over an active stage, when the server's metrics
	// split them.
	LocalHitTokens    *float64 `json:"local_hit_tokens,omitempty"`
	ExternalHitTokens *float64 `json:"external_hit_tokens,omitempty"`
}

// CapacitySchema is the "schema" of Capacity.
const CapacitySchema = "mtkit.capacity/v1"

// Judge sums up a sweep's results.
func (c Criteria) Judge(kind Kind, objectives []string, rs []Result) Capacity {
	out := Capacity{Schema: CapacitySchema, Kind: kind, Objectives: objectives, Unsteady: c.withDefaults().Unsteady}
	if out.Objectives == nil {
		out.Objectives = []string{}
	}
	if kind == Active {
		return c.judgeActive(out, rs)
	}
	p := Planner{Criteria: c}
	lo, hi, bracketed := p.bracket(rs)
	if !bracketed {
		for _, r := range rs {
			if c.Holds(r) {
				lo = max(lo, r.Stage.Level)
			}
		}
	} else {
		out.Failed = &hi
	}
	out.Capacity = lo
	if k, ok := c.Knee(rs); ok {
		out.Knee = &k
	}
	for i, r := range rs {
		j := Judged{Stage: i + 1, Kind: r.Stage.Kind, Level: r.Stage.Level, Throughput: r.Throughput, Steady: c.Steady(r),
			ClientLimited: c.ClientLimited(r), MeetsSLO: r.MeetsSLO, Failed: r.Failed, Holds: c.Holds(r)}
		out.ClientLimited = out.ClientLimited || j.ClientLimited
		out.Stages = append(out.Stages, j)
	}
	return out
}

// NoneSteady reports whether stages were run and none of them was steady:
// the capacity then measures nothing.
func (c Capacity) NoneSteady() bool {
	if c.Kind == Active {
		return false // an active sweep is judged by cache retention
	}
	for _, j := range c.Stages {
		if j.Steady {
			return false
		}
	}
	return len(c.Stages) > 0
}

// Err is the sweep's failure to find a capacity: no stage was steady
// (issue 23: it reported "capacity 0 rate" and mtrun exited 0).
func (c Capacity) Err() error {
	if c.Kind == Active {
		for _, j := range c.Stages {
			if j.LaterTurns != nil && *j.LaterTurns > 0 {
				return nil
			}
		}
		return fmt.Errorf("sweep: none of the %d stages had a later turn (a conversation coming back): no retention was measured; lengthen the stages (--stage-duration) or give the conversations more turns", len(c.Stages))
	}
	if c.NoneSteady() {
		return fmt.Errorf("sweep: none of the %d stages was steady (their two halves' request rates differed by more than %.0f%%): no capacity was measured; lengthen the stages (--stage-duration) or start lower", len(c.Stages), 100*c.Unsteady)
	}
	return nil
}

// Line is the one-line summary of the capacity.
func (c Capacity) Line() string {
	if c.Kind == Active {
		return c.activeLine()
	}
	if c.NoneSteady() {
		return fmt.Sprintf("no capacity: none of the %d stages was steady; lengthen the stages (--stage-duration) or start lower", len(c.Stages))
	}
	s := fmt.Sprintf("capacity %s %s", strconv.FormatFloat(c.Capacity, 'g', 4, 64), c.Kind)
	if c.Failed != nil {
		s += fmt.Sprintf(" (%s did not hold)", strconv.FormatFloat(*c.Failed, 'g', 4, 64))
	} else {
		s += " (a lower bound: every level tried held)"
	}
	if len(c.Objectives) == 0 {
		s = "no objectives: largest level that held (steady, no failure) " + s[len("capacity "):]
	}
	if c.Knee != nil {
		s += fmt.Sprintf("; knee at %s", strconv.FormatFloat(*c.Knee, 'g', 4, 64))
	} else {
		s += "; knee not reached"
	}
	if c.ClientLimited {
		s += "; the client could not hold a level: the server's capacity may be higher"
	}
	return s
}
