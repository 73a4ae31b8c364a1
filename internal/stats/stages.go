package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sweep"
)

// StageRow is one load stage of a staged run or sweep (records' stage
// field), measured over its records after warmup, with the sweep
// package's verdicts.
type StageRow struct {
	Stage int `json:"stage"`
	// Load is the stage's level as its records' stage_load carries it,
	// KIND=LEVEL (e.g. clients=8); "" for records written without it.
	Load     string         `json:"load,omitempty"`
	Requests int            `json:"requests"`
	Failed   int            `json:"failed"`
	Errors   map[string]int `json:"errors"`
	// RuntimeSec is from the first start to the last end of the stage's
	// requests; Throughput is successful requests a second over it, and
	// FirstHalf and SecondHalf the same over its two halves (by each
	// request's midpoint).
	RuntimeSec   Num `json:"runtime_sec"`
	Throughput   Num `json:"throughput"`
	FirstHalf    Num `json:"throughput_first_half"`
	SecondHalf   Num `json:"throughput_second_half"`
	TTFTP50      Num `json:"ttft_p50_ms"`
	TTFTP95      Num `json:"ttft_p95_ms"`
	TTFTP99      Num `json:"ttft_p99_ms"`
	ITLP50       Num `json:"itl_p50_ms"`
	ITLP99       Num `json:"itl_p99_ms"`
	LatencyP50   Num `json:"latency_p50_ms"`
	LatencyP99   Num `json:"latency_p99_ms"`
	LatenessP99  Num `json:"lateness_p99_ms"`
	CacheHitRate Num `json:"cache_hit_rate"`
	// Steady: the halves' throughputs agree (sweep.Criteria.Steady);
	// ClientLimited: the client sent late (lateness p99 above 100 ms), so
	// the stage says nothing about the server.
	Steady        bool `json:"steady"`
	ClientLimited bool `json:"client_limited"`
	// MeetsSLO is set with objectives: every one held over the stage.
	MeetsSLO   *bool             `json:"meets_slo,omitempty"`
	Objectives []ObjectiveResult `json:"objectives,omitempty"`
	// turns is the stage by turn, for the HTML report.
	turns []*Group
}

// Result is the row as the sweep package judges it, at level of kind.
func (r *StageRow) Result(st sweep.Stage) sweep.Result {
	res := sweep.Result{Stage: st, Throughput: nz(r.Throughput), FirstHalf: nz(r.FirstHalf), SecondHalf: nz(r.SecondHalf),
		LatenessP99: msDuration(r.LatenessP99), MeetsSLO: r.MeetsSLO == nil || *r.MeetsSLO}
	if r.Requests > 0 {
		res.Failed = float64(r.Failed) / float64(r.Requests)
	}
	return res
}

// Stages accumulates the measured records of each stage (warmup records
// are left out). It is what mtstats reports per stage and what mtrun
// judges a sweep's stages with.
type Stages struct {
	objs   []Objective
	slo    *sloChecker
	stages map[int]*stageAcc
}

type stageAcc struct {
	load  string
	all   *acc
	turns map[int]*acc
}

// NewStages returns an empty accumulator judging objs.
func NewStages(objs []Objective) *Stages {
	s := &Stages{objs: objs, stages: map[int]*stageAcc{}}
	if len(objs) > 0 {
		s.slo = &sloChecker{objs: objs}
	}
	return s
}

// Add accounts one record.
func (s *Stages) Add(r *record.Record) {
	if !r.Measured() {
		return
	}
	a := s.stages[r.Stage]
	if a == nil {
		a = &stageAcc{all: newAcc(true), turns: map[int]*acc{}}
		s.stages[r.Stage] = a
	}
	if a.load == "" {
		a.load = r.StageLoad
	}
	good := r.OK()
	if s.slo != nil && !r.Retried {
		good = s.slo.good(r)
	}
	a.all.add(r, good)
	t := a.turns[r.Turn]
	if t == nil {
		t = newAcc(false)
		a.turns[r.Turn] = t
	}
	t.add(r, good)
}

// Len is the number of stages seen.
func (s *Stages) Len() int { return len(s.stages) }

// Rows returns the stages in order of their numbers. It sorts samples in
// place.
func (s *Stages) Rows() []StageRow {
	keys := make([]int, 0, len(s.stages))
	for k := range s.stages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	crit := sweep.Criteria{}
	out := make([]StageRow, 0, len(keys))
	for _, k := range keys {
		a := s.stages[k]
		g := a.all.group(strconv.Itoa(k))
		row := StageRow{Stage: k, Load: a.load, Requests: g.Requests, Failed: g.Failed, Errors: g.Errors, RuntimeSec: g.RuntimeSec,
			CacheHitRate: g.CacheHitRate, turns: turnGroups(a.turns)}
		row.Throughput, row.FirstHalf, row.SecondHalf = throughputs(a.all)
		q := func(m Metric, p float64) Num {
			d, ok := g.Metrics.Get(MetricNames[m])
			if !ok || d.Count == 0 {
				return Num(math.NaN())
			}
			return Num(d.Quantile(p))
		}
		row.TTFTP50, row.TTFTP95, row.TTFTP99 = q(TTFT, 0.5), q(TTFT, 0.95), q(TTFT, 0.99)
		row.ITLP50, row.ITLP99 = q(ITL, 0.5), q(ITL, 0.99)
		row.LatencyP50, row.LatencyP99 = q(Latency, 0.5), q(Latency, 0.99)
		row.LatenessP99 = q(Lateness, 0.99)
		if len(s.objs) > 0 {
			met := true
			for _, o := range s.objs {
				res := evalObjective(o, a.all, a.turns)
				met = met && res.Met
				row.Objectives = append(row.Objectives, res)
			}
			row.MeetsSLO = &met
		}
		// The kind matters: a users stage is not judged client-limited.
		st := sweep.Stage{}
		if k, level, err := sweep.ParseLoad(row.Load); err == nil {
			st = sweep.Stage{Kind: k, Level: level}
		}
		res := row.Result(st)
		row.Steady, row.ClientLimited = crit.Steady(res), crit.ClientLimited(res)
		out = append(out, row)
	}
	return out
}

// judgeLoads judges the stages as a sweep's, at their loads: nil unless
// every stage has one, all of one kind.
func judgeLoads(rows []StageRow, objs []Objective, crit sweep.Criteria) *sweep.Capacity {
	var (
		kind sweep.Kind
		rs   []sweep.Result
	)
	for _, row := range rows {
		k, level, err := sweep.ParseLoad(row.Load)
		if err != nil || kind != "" && k != kind {
			return nil
		}
		kind = k
		rs = append(rs, row.Result(sweep.Stage{Kind: k, Level: level}))
	}
	if len(rs) < 2 {
		return nil
	}
	c := crit.Judge(kind, ObjectiveTexts(objs), rs)
	return &c
}

// StagedRun is one --compare input's stages, and their capacity judged
// from their loads.
type StagedRun struct {
	Label    string          `json:"label"`
	Stages   []StageRow      `json:"stages"`
	Capacity *sweep.Capacity `json:"capacity,omitempty"`
}

// throughputs returns the successful requests a second of a over its
// whole runtime and over each half of it (a request is in the half its
// midpoint falls in: by end time, the first half would lack the requests
// still running when the stage's window opens).
func throughputs(a *acc) (all, first, second Num) {
	nan := Num(math.NaN())
	if !a.timed || a.maxEnd <= a.minStart {
		return nan, nan, nan
	}
	from, to := float64(a.minStart)/1e9, float64(a.maxEnd)/1e9
	mid := (from + to) / 2
	var n1, n2 int
	for _, p := range a.series {
		if (p.start+p.end)/2 < mid {
			n1++
		} else {
			n2++
		}
	}
	half := (to - from) / 2
	return Num(float64(n1+n2) / (to - from)), Num(float64(n1) / half), Num(float64(n2) / half)
}

func nz(x Num) float64 {
	if math.IsNaN(float64(x)) {
		return 0
	}
	return float64(x)
}

// msDuration converts milliseconds to a duration (NaN: 0).
func msDuration(x Num) time.Duration {
	if math.IsNaN(float64(x)) {
		return 0
	}
	return time.Duration(float64(x) * 1e6)
}

// stages is the per-stage table.
func (t *textWriter) stages(title string, rows []StageRow) {
	t.heading(title)
	withLoad := slices.ContainsFunc(rows, func(r StageRow) bool { return r.Load != "" })
	header := []string{"stage", "requests", "failed", "throughput", "ttft_p50", "ttft_p95", "ttft_p99", "itl_p50", "itl_p99",
		"latency_p50", "latency_p99", "lateness_p99", "cache_hit", "steady", "client_limited"}
	withSLO := len(rows) > 0 && rows[0].MeetsSLO != nil
	if withSLO {
		header = append(header, "slo")
	}
	if withLoad {
		header = slices.Insert(header, 1, "load")
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var out [][]string
	for _, r := range rows {
		f := func(x Num) string { return fmtNum(float64(x)) }
		row := []string{strconv.Itoa(r.Stage), strconv.Itoa(r.Requests), strconv.Itoa(r.Failed), f(r.Throughput),
			f(r.TTFTP50), f(r.TTFTP95), f(r.TTFTP99), f(r.ITLP50), f(r.ITLP99), f(r.LatencyP50), f(r.LatencyP99),
			f(r.LatenessP99), fmtPct(r.CacheHitRate), yes(r.Steady), yes(r.ClientLimited)}
		if withSLO {
			row = append(row, map[bool]string{true: "met", false: "NOT MET"}[*r.MeetsSLO])
		}
		if withLoad {
			row = slices.Insert(row, 1, r.Load)
		}
		out = append(out, row)
	}
	t.table(header, out)
}

// stagedRuns prints each --compare input's stages and capacity, then the
// capacities side by side.
func (t *textWriter) stagedRuns(runs []StagedRun) {
	var with []StagedRun
	for _, r := range runs {
		t.stages("by stage, "+r.Label+":", r.Stages)
		if r.Capacity != nil {
			t.printf("%s: %s\n", r.Label, r.Capacity.Line())
			with = append(with, r)
		}
	}
	if len(with) < 2 {
		return
	}
	t.heading("capacity compared:")
	base := with[0].Capacity
	for _, r := range with {
		c := r.Capacity
		line := fmt.Sprintf("%s: %s %s", r.Label, strconv.FormatFloat(c.Capacity, 'g', 4, 64), c.Kind)
		if c.Failed == nil {
			line += " (lower bound)"
		}
		if r.Label != with[0].Label && base.Capacity > 0 && c.Kind == base.Kind {
			line += fmt.Sprintf(", %.2fx %s", c.Capacity/base.Capacity, with[0].Label)
		}
		t.printf("%s\n", line)
	}
}
