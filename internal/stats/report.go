package stats

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mtkit/mtkit/internal/sweep"
)

// SchemaVersion is the "schema" value of the JSON report. It changes only
// when a field is removed or changes meaning; fields may be added.
const SchemaVersion = "mtstats/v1"

// Report is everything mtstats computed; every output format renders it.
type Report struct {
	Schema string `json:"schema"`
	// Partial: mtstats was interrupted before the end of its input.
	Partial bool `json:"partial"`
	// Live: a --every report, printed while the input is still being
	// read (nothing was interrupted).
	Live    bool   `json:"live,omitempty"`
	Inputs  Inputs `json:"inputs"`
	Summary *Group `json:"summary"`
	By      string `json:"by,omitempty"`
	// ByDetail is how much each group shows: ByTable (the per-group
	// table's figures) or ByFull (the whole report).
	ByDetail string `json:"by_detail,omitempty"`
	// Only are the metrics of a report limited by --only.
	Only    []string    `json:"only,omitempty"`
	Groups  []*Group    `json:"groups,omitempty"`
	SLO     *SLOReport  `json:"slo,omitempty"`
	Compare *Comparison `json:"compare,omitempty"`
	Server  *Server     `json:"server,omitempty"` // server.go
	// Affinity is present when records carry a backend.
	Affinity *Affinity `json:"affinity,omitempty"`
	// Segments is the per-segment view of runs split over processes.
	Segments *SegmentsReport `json:"segments,omitempty"`
	// Stages is one row per stage of a staged run or sweep, when the
	// records have more than one stage (stages.go).
	Stages []StageRow `json:"stages,omitempty"`
	// Capacity is the sweep judged again from the records: at the levels
	// of its capacity file (--capacity), else at the records' stage loads.
	Capacity *sweep.Capacity `json:"capacity,omitempty"`
	// StagedRuns are the stages of each --compare input (two sweeps side
	// by side), instead of Stages.
	StagedRuns []StagedRun `json:"staged_runs,omitempty"`

	turns  []*Group // per turn, for the HTML and XLSX reports
	series []point
	// groupTurns and groupSeries are each --compare input's turns and
	// requests over time, for the HTML report.
	groupTurns  map[string][]*Group
	groupSeries map[string][]point
	raw         [][]any
}

// GroupCounts are the figures of a Group every report has, --only's
// included: the request counts, runtime and request rate.
type GroupCounts struct {
	Key            string         `json:"key,omitempty"`
	Requests       int            `json:"requests"`
	OK             int            `json:"ok"`
	Failed         int            `json:"failed"`
	Errors         map[string]int `json:"errors"`
	Retries        int            `json:"retries"`
	RuntimeSec     Num            `json:"runtime_sec"`
	RequestsPerSec Num            `json:"requests_per_sec"`
}

// Group is the summary of a set of requests: all of them or one --by group.
type Group struct {
	GroupCounts
	InputTokens           int64     `json:"input_tokens"`
	OutputTokens          int64     `json:"output_tokens"`
	InputTokensPerSec     Num       `json:"input_tokens_per_sec"`
	OutputTokensPerSec    Num       `json:"output_tokens_per_sec"`
	TotalTokensPerSec     Num       `json:"total_tokens_per_sec"`
	CacheHitRate          Num       `json:"cache_hit_rate"`
	CacheReportedRequests int       `json:"cache_reported_requests"`
	GoodRequests          *int      `json:"good_requests,omitempty"`
	Goodput               *Num      `json:"goodput,omitempty"`
	Metrics               Metrics   `json:"metrics"`
	Conversations         ConvStats `json:"conversations"`

	// only: the group has the figures of a report limited by --only
	// (onlyGroup), the others are not computed.
	only bool
}

// MarshalJSON implements json.Marshaler: a group of a report limited by
// --only has only the figures it computed.
func (g *Group) MarshalJSON() ([]byte, error) {
	if g.only {
		return json.Marshal(onlyGroup{g.GroupCounts, g.Metrics})
	}
	type plain Group // without the method
	return json.Marshal((*plain)(g))
}

// ConvStats summarises whole conversations.
type ConvStats struct {
	Count     int     `json:"count"`
	Completed int     `json:"completed"`
	MetSLO    *int    `json:"met_slo,omitempty"`
	Metrics   Metrics `json:"metrics"`
}

// Conversation metric names.
const (
	ConvTurns    = "conversation_turns"
	ConvDuration = "conversation_duration_ms"
	ConvWait     = "conversation_wait_ms"
)

// Num is a float that encodes NaN and ±Inf as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// NamedDescription is one row of a describe table.
type NamedDescription struct {
	Name string
	Description
}

// Metrics is an ordered list of described metrics; it encodes as a JSON
// object in table order.
type Metrics []NamedDescription

// Get returns the named metric.
func (m Metrics) Get(name string) (Description, bool) {
	for _, d := range m {
		if d.Name == name {
			return d.Description, true
		}
	}
	return Description{}, false
}

// MarshalJSON implements json.Marshaler.
func (m Metrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, d := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(d.Name)
		b.Write(name)
		b.WriteByte(':')
		dj, _ := d.Description.MarshalJSON()
		b.Write(dj)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// statNames are the describe columns: JSON keys and table headers.
var statNames = []struct{ key, header string }{
	{"count", "count"}, {"mean", "mean"}, {"std", "std"}, {"min", "min"},
	{"p25", "25%"}, {"p50", "50%"}, {"p75", "75%"}, {"p90", "90%"}, {"p99", "99%"},
	{"p99.9", "99.9%"}, {"p99.99", "99.99%"}, {"max", "max"},
}

// stat returns the describe column key of d, and whether it applies.
func (d *Description) stat(key string) (float64, bool) {
	switch key {
	case "count":
		return float64(d.Count), true
	case "mean":
		return d.Mean, true
	case "std":
		return d.Std, true
	case "min":
		return d.Min, true
	case "p25":
		return d.P25, true
	case "p50":
		return d.P50, true
	case "p75":
		return d.P75, true
	case "p90":
		return d.P90, true
	case "p99":
		return d.P99, true
	case "p99.9":
		return d.P999, d.HasP999
	case "p99.99":
		return d.P9999, d.HasP9999
	case "max":
		return d.Max, true
	}
	return math.NaN(), false
}

// MarshalJSON encodes the describe columns in order; p99.9 and p99.99
// appear only with enough samples, undefined values are null.
func (d Description) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, s := range statNames {
		v, ok := d.stat(s.key)
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`"` + s.key + `":`)
		j, _ := Num(v).MarshalJSON()
		b.Write(j)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SLOReport is the outcome of --slo.
type SLOReport struct {
	Met                   bool              `json:"met"`
	Objectives            []ObjectiveResult `json:"objectives"`
	Requests              int               `json:"requests"`
	GoodRequests          int               `json:"good_requests"`
	GoodRequestShare      Num               `json:"good_request_share"`
	Goodput               Num               `json:"goodput"`
	Conversations         int               `json:"conversations"`
	GoodConversations     int               `json:"good_conversations"`
	GoodConversationShare Num               `json:"good_conversation_share"`
}

// ObjectiveResult is one objective, its measured value and verdict.
type ObjectiveResult struct {
	Objective string `json:"objective"`
	Turn      *int   `json:"turn,omitempty"`
	Metric    string `json:"metric"`
	Stat      string `json:"stat"`
	LimitMs   Num    `json:"limit_ms"`
	ValueMs   Num    `json:"value_ms"`
	Samples   int    `json:"samples"`
	Met       bool   `json:"met"`
}

// Comparison puts labelled inputs side by side (--compare).
type Comparison struct {
	Labels []string     `json:"labels"`
	Rows   []CompareRow `json:"rows"`
}

// CompareRow is one figure across the compared inputs, with the ratio of
// each to the first.
type CompareRow struct {
	Name   string `json:"name"`
	Values []Num  `json:"values"`
	Ratios []Num  `json:"ratios"`
}

// group turns an accumulator into its summary; it sorts the samples.
func (a *acc) group(key string) *Group {
	errs := maps.Clone(a.errors)
	if errs == nil {
		errs = map[string]int{}
	}
	g := &Group{GroupCounts: GroupCounts{Key: key, Requests: a.requests, OK: a.ok, Failed: a.requests - a.ok,
		Errors: errs, Retries: a.retries}, InputTokens: a.inTok, OutputTokens: a.outTok,
		CacheReportedRequests: a.cacheReported}
	elapsed := math.NaN()
	if a.timed {
		elapsed = float64(a.maxEnd-a.minStart) / 1e9
	}
	per := func(x float64) Num {
		if !(elapsed > 0) {
			return Num(math.NaN())
		}
		return Num(x / elapsed)
	}
	g.RuntimeSec = Num(elapsed)
	g.RequestsPerSec = per(float64(a.requests))
	g.InputTokensPerSec = per(float64(a.inTok))
	g.OutputTokensPerSec = per(float64(a.outTok))
	g.TotalTokensPerSec = per(float64(a.inTok + a.outTok))
	g.CacheHitRate = Num(math.NaN())
	if a.cacheReported > 0 && a.cachedOf > 0 {
		g.CacheHitRate = Num(float64(a.cached) / float64(a.cachedOf))
	}
	if a.metrics != nil {
		g.only = !a.lite
		g.Metrics = a.describe(a.metrics)
		if a.convs != nil {
			g.Conversations = a.convStats()
		}
		return g
	}
	all := make([]Metric, 0, numMetrics)
	for m := range numMetrics {
		if m < coreMetrics || a.samples[m].Len() > 0 {
			all = append(all, m)
		}
	}
	g.Metrics = a.describe(all)
	if a.gaps != nil {
		g.Metrics = append(g.Metrics, a.gaps.metrics()...)
	}
	g.Conversations = a.convStats()
	return g
}

// describe describes the samples of metrics, in parallel: sorting
// dominates, and each goroutine owns one sample set (at most GOMAXPROCS
// at a time).
func (a *acc) describe(metrics []Metric) Metrics {
	out := make(Metrics, len(metrics))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, m := range metrics {
		wg.Go(func() {
			sem <- struct{}{}
			out[i] = NamedDescription{MetricNames[m], a.samples[m].describe()}
			<-sem
		})
	}
	wg.Wait()
	return out
}

// convStats describes the conversations of a.
func (a *acc) convStats() ConvStats {
	var cs ConvStats
	turns := make([]float64, 0, len(a.convs))
	dur := make([]float64, 0, len(a.convs))
	wait := make([]float64, 0, len(a.convs))
	for _, c := range a.convs {
		cs.Count++
		if c.failed == 0 {
			cs.Completed++
		}
		turns = append(turns, float64(c.turns))
		dur = append(dur, float64(c.maxEnd-c.minStart)/1e6)
		wait = append(wait, c.waitMs)
	}
	cs.Metrics = Metrics{
		{ConvTurns, Describe(turns)}, {ConvDuration, Describe(dur)}, {ConvWait, Describe(wait)},
	}
	return cs
}

// sortKeys orders group keys numerically when they all are numbers.
func sortKeys(keys []string) {
	numeric := true
	for _, k := range keys {
		if _, err := strconv.ParseFloat(k, 64); err != nil {
			numeric = false
			break
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if numeric {
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			return compare(x, y)
		}
		return strings.Compare(a, b)
	})
}

// report builds the report of what was read so far. It sorts samples in
// place, so the caller must hold c.mu.
func (c *collector) report(objs []Objective, compare bool) *Report {
	rep := &Report{Schema: SchemaVersion, Inputs: c.in, By: c.opts.By}
	if c.opts.By != "" {
		rep.ByDetail = ByFull
		if c.liteGroups {
			rep.ByDetail = ByTable
		}
	}
	rep.Inputs.Files = make([]*FileStats, len(c.in.Files))
	for i, f := range c.in.Files {
		cp := *f
		rep.Inputs.Files[i] = &cp
	}
	rep.Summary = c.all.group("")
	for _, m := range c.opts.only {
		rep.Only = append(rep.Only, MetricNames[m])
	}
	if rep.Only == nil { // --only: the request counts and the metrics only
		rep.Affinity = c.aff.report()
		rep.Segments = c.segs.report()
	}
	rep.series = c.all.series
	rep.raw = c.raw
	if len(rep.raw) > maxXLSXRows {
		rep.raw = rep.raw[:maxXLSXRows]
	}
	keys := make([]string, 0, len(c.groups))
	for k := range c.groups {
		keys = append(keys, k)
	}
	if c.opts.By == "file" || compare {
		keys = keys[:0]
		for _, f := range c.in.Files {
			if c.groups[f.Label] != nil {
				keys = append(keys, f.Label)
			}
		}
	} else {
		sortKeys(keys)
	}
	for _, k := range keys {
		rep.Groups = append(rep.Groups, c.groups[k].group(k))
	}
	if c.groupTurns != nil {
		rep.groupTurns, rep.groupSeries = map[string][]*Group{}, map[string][]point{}
		for _, k := range keys {
			rep.groupTurns[k] = turnGroups(c.groupTurns[k])
			rep.groupSeries[k] = c.groups[k].series
		}
	}
	rep.turns = turnGroups(c.turns)
	if c.slo != nil {
		rep.SLO = c.sloReport(rep, objs)
	}
	if compare {
		rep.Compare = comparison(rep.Groups, rep.Only)
	}
	if c.stagesBy != nil {
		for _, k := range keys {
			if s := c.stagesBy[k]; s != nil && s.Len() > 1 {
				rows := s.Rows()
				rep.StagedRuns = append(rep.StagedRuns, StagedRun{Label: k, Stages: rows, Capacity: judgeLoads(rows, s.objs, sweep.Criteria{})})
			}
		}
	} else if c.stages.Len() > 1 {
		rep.Stages = c.stages.Rows()
		rep.Capacity = judgeLoads(rep.Stages, c.stages.objs, sweep.Criteria{})
	}
	if c.capacity != nil {
		rep.Capacity = c.capacity.judge(c.stages, c.stages.objs)
	}
	return rep
}

func (c *collector) sloReport(rep *Report, objs []Objective) *SLOReport {
	s := &SLOReport{Met: true, Requests: c.all.requests, GoodRequests: c.all.good}
	s.GoodRequestShare = ratio(float64(s.GoodRequests), float64(s.Requests))
	s.Goodput = Num(math.NaN())
	if rt := float64(rep.Summary.RuntimeSec); rt > 0 {
		s.Goodput = Num(float64(s.GoodRequests) / rt)
	}
	for _, cv := range c.all.convs {
		s.Conversations++
		if !cv.missedSLO {
			s.GoodConversations++
		}
	}
	s.GoodConversationShare = ratio(float64(s.GoodConversations), float64(s.Conversations))
	rep.Summary.GoodRequests = &s.GoodRequests
	gp := s.Goodput
	rep.Summary.Goodput = &gp
	rep.Summary.Conversations.MetSLO = &s.GoodConversations
	for _, o := range objs {
		res := evalObjective(o, c.all, c.turns)
		s.Met = s.Met && res.Met
		s.Objectives = append(s.Objectives, res)
	}
	return s
}

// evalObjective measures objective o over the requests of all (or of
// its turn, from turns).
func evalObjective(o Objective, all *acc, turns map[int]*acc) ObjectiveResult {
	set := &all.samples[o.Metric]
	res := ObjectiveResult{Objective: o.Text, Metric: MetricNames[o.Metric], LimitMs: Num(o.Limit)}
	if o.Turn >= 0 {
		t := o.Turn
		res.Turn = &t
		set = &sampleSet{}
		if a := turns[o.Turn]; a != nil {
			set = &a.samples[o.Metric]
		}
	}
	q, mean := set.sorted()
	res.Samples = set.Len()
	switch {
	case math.IsNaN(o.P):
		res.Stat = "mean"
		res.ValueMs = Num(mean)
	default:
		res.Stat = "p" + strconv.FormatFloat(o.P*100, 'f', -1, 64)
		res.ValueMs = Num(q(o.P))
	}
	// No samples: nothing violated the objective, but nothing showed
	// it was met either; it counts as not met.
	res.Met = res.Samples > 0 && o.within(float64(res.ValueMs))
	return res
}

func ratio(a, b float64) Num {
	if b == 0 {
		return Num(math.NaN())
	}
	return Num(a / b)
}

// comparison lays out the headline figures of each group side by side:
// with --only (only, the metrics' names), the request counts, runtime,
// request rate and those metrics.
func comparison(groups []*Group, only []string) *Comparison {
	cmp := &Comparison{}
	for _, g := range groups {
		cmp.Labels = append(cmp.Labels, g.Key)
	}
	row := func(name string, val func(*Group) float64) {
		r := CompareRow{Name: name}
		for i, g := range groups {
			v := val(g)
			r.Values = append(r.Values, Num(v))
			if i > 0 {
				r.Ratios = append(r.Ratios, ratio(v, float64(r.Values[0])))
			}
		}
		cmp.Rows = append(cmp.Rows, r)
	}
	row("requests", func(g *Group) float64 { return float64(g.Requests) })
	row("failed", func(g *Group) float64 { return float64(g.Failed) })
	row("runtime_sec", func(g *Group) float64 { return float64(g.RuntimeSec) })
	row("requests_per_sec", func(g *Group) float64 { return float64(g.RequestsPerSec) })
	metrics := only
	if only == nil {
		row("output_tokens_per_sec", func(g *Group) float64 { return float64(g.OutputTokensPerSec) })
		row("total_tokens_per_sec", func(g *Group) float64 { return float64(g.TotalTokensPerSec) })
		row("cache_hit_rate", func(g *Group) float64 { return float64(g.CacheHitRate) })
		metrics = []string{"ttft_ms", "tpot_ms", "itl_ms", "latency_ms"}
	}
	for _, m := range metrics {
		for _, st := range []string{"mean", "p50", "p90", "p99"} {
			row(m+"."+st, func(g *Group) float64 {
				d, ok := g.Metrics.Get(m)
				if !ok {
					return math.NaN()
				}
				v, _ := d.stat(st)
				return v
			})
		}
	}
	return cmp
}

// turnGroups returns the groups of per-turn accumulators in turn order.
func turnGroups(accs map[int]*acc) []*Group {
	turns := make([]int, 0, len(accs))
	for t := range accs {
		turns = append(turns, t)
	}
	slices.Sort(turns)
	out := make([]*Group, 0, len(turns))
	for _, t := range turns {
		out = append(out, accs[t].group(strconv.Itoa(t)))
	}
	return out
}
