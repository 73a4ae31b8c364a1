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
	"time"
)

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
	// SessionStartsPerSec is the achieved session-start rate: the
	// conversations' first sends (turn 0, attempt 0, choice 0) over
	// RuntimeSec, the window RequestsPerSec uses too (issue 23).
	SessionStartsPerSec   Num       `json:"session_starts_per_sec"`
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
	// VerifyOutput is there when records carry verify_mismatch.
	VerifyOutput *VerifyOutput `json:"verify_output,omitempty"`
	// First and Last are the first start and the last end of the
	// group's requests (zero without requests), for the reports that
	// give times (llm-d's).
	First, Last time.Time `json:"-"`
	// SLO is this input's verdict under --compare --slo (a
	// *judge.SLOReport): each input is judged on its own requests, and
	// the report has no pooled verdict (issue 23).
	SLO Verdict `json:"slo,omitempty"`

	// only: the group has the figures of a report limited by --only
	// (onlyGroup), the others are not computed.
	only bool
}

// Verdict is an SLO verdict over a group's requests.
type Verdict interface {
	SLOMet() bool
}

// MarshalJSON implements json.Marshaler: a group of a report limited by
// --only has only the figures it computed.
func (g *Group) MarshalJSON() ([]byte, error) {
	if g.only {
		return marshalPlain(onlyGroup{g.GroupCounts, g.Metrics})
	}
	type plain Group // without the method
	return marshalPlain((*plain)(g))
}

// marshalPlain is json.Marshal with '<', '>' and '&' as themselves, as
// the report's encoder writes them (report.Render): a group's SLO
// objectives read "ttft_p95<=60ms", not "ttft_p95\u003c=60ms".
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Limited reports whether g has only the figures of a report limited by
// --only.
func (g *Group) Limited() bool { return g.only }

// ConvStats summarises whole conversations.
type ConvStats struct {
	Count int `json:"count"`
	// Finished, Failed, Abandoned and Unfinished count the
	// conversations by how they ended (the records' conversation_end),
	// in mtrun's words; null when no record carries it (an older mtrun).
	// Issue 23: conversations cut off by --duration were "completed".
	Finished   *int `json:"finished"`
	Failed     *int `json:"failed"`
	Abandoned  *int `json:"abandoned"`
	Unfinished *int `json:"unfinished"`
	// Completed is mtstats/v1's "completed", kept so that v1 readers
	// keep working: deprecated, it equals Finished (its corrected
	// meaning), or WithoutFailure when the records do not say how the
	// conversations ended (what v1 counted then). Issue 23 removed it
	// without a schema change; read "finished".
	Completed int `json:"completed"`
	// WithoutFailure counts the conversations none of whose requests
	// failed (finished or not).
	WithoutFailure int     `json:"without_failed_request"`
	MetSLO         *int    `json:"met_slo,omitempty"`
	Metrics        Metrics `json:"metrics"`
}

// Conversation metric names. ConvUserTurns counts a conversation's user
// turns: its requests (final attempts), not its messages as vLLM's
// num_turns and mtgen's --turns do (issue 23).
const (
	ConvUserTurns = "conversation_user_turns"
	ConvDuration  = "conversation_duration_ms"
	ConvWait      = "conversation_wait_ms"
	// ConvTurns is ConvUserTurns under its mtstats/v1 name, kept in the
	// JSON and CSV reports for their readers (deprecated): "turns" there
	// meant user turns, where mtgen's --turns counts messages.
	ConvTurns = "conversation_turns"
)

// MetricsWithAliases are c's metrics followed by the deprecated names
// the JSON and CSV reports keep for mtstats/v1's readers (ConvTurns).
func (c *ConvStats) MetricsWithAliases() Metrics {
	d, ok := c.Metrics.Get(ConvUserTurns)
	if !ok {
		return c.Metrics
	}
	return append(slices.Clip(c.Metrics), NamedDescription{ConvTurns, d})
}

// MarshalJSON implements json.Marshaler: the metrics with their aliases.
func (c ConvStats) MarshalJSON() ([]byte, error) {
	type plain ConvStats // without the method
	p := plain(c)
	p.Metrics = c.MetricsWithAliases()
	return marshalPlain(p)
}

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

// Finite returns a pointer to x, or nil when x is NaN or infinite: an
// optional figure, null in JSON and a gap in a chart.
func Finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
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

// Has reports whether m describes the metric name with samples.
func (m Metrics) Has(name string) bool {
	d, ok := m.Get(name)
	return ok && d.Count > 0
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

// StatNames are the describe columns: JSON keys and table headers.
var StatNames = []struct{ Key, Header string }{
	{"count", "count"}, {"mean", "mean"}, {"std", "std"}, {"min", "min"},
	{"p25", "25%"}, {"p50", "50%"}, {"p75", "75%"}, {"p90", "90%"}, {"p99", "99%"},
	{"p99.9", "99.9%"}, {"p99.99", "99.99%"}, {"max", "max"},
}

// Stat returns the describe column key of d, and whether it applies.
func (d *Description) Stat(key string) (float64, bool) {
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
	for _, s := range StatNames {
		v, ok := d.Stat(s.Key)
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`"` + s.Key + `":`)
		j, _ := Num(v).MarshalJSON()
		b.Write(j)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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

// Group turns an accumulator into its summary; it sorts the samples.
func (a *Acc) Group(key string) *Group {
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
		g.First, g.Last = time.Unix(0, a.minStart), time.Unix(0, a.maxEnd)
	}
	per := func(x float64) Num {
		if !(elapsed > 0) {
			return Num(math.NaN())
		}
		return Num(x / elapsed)
	}
	g.RuntimeSec = Num(elapsed)
	g.VerifyOutput = a.verify.report()
	g.RequestsPerSec = per(float64(a.requests))
	g.SessionStartsPerSec = per(float64(a.sessions))
	g.InputTokensPerSec = per(float64(a.inTok))
	g.OutputTokensPerSec = per(float64(a.outTok))
	g.TotalTokensPerSec = per(float64(a.inTok + a.outTok))
	g.CacheHitRate = Num(math.NaN())
	if a.cacheReported > 0 && a.cachedOf > 0 {
		g.CacheHitRate = Num(float64(a.cached) / float64(a.cachedOf))
	}
	if a.metrics != nil {
		g.only = !a.lite
		if g.only {
			g.SessionStartsPerSec = Num(math.NaN()) // --only reads no turn or attempt
		}
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
func (a *Acc) describe(metrics []Metric) Metrics {
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
func (a *Acc) convStats() ConvStats {
	var cs ConvStats
	turns := make([]float64, 0, len(a.convs))
	dur := make([]float64, 0, len(a.convs))
	wait := make([]float64, 0, len(a.convs))
	var ends [4]int // finished, failed, abandoned, unfinished
	recorded := false
	for _, c := range a.convs {
		cs.Count++
		if c.failed == 0 {
			cs.WithoutFailure++
		}
		switch c.end {
		case "finished":
			ends[0]++
		case "failed":
			ends[1]++
		case "abandoned":
			ends[2]++
		default:
			ends[3]++
		}
		recorded = recorded || c.end != ""
		turns = append(turns, float64(c.turns))
		dur = append(dur, float64(c.maxEnd-c.minStart)/1e6)
		wait = append(wait, c.waitMs)
	}
	if recorded {
		cs.Finished, cs.Failed, cs.Abandoned, cs.Unfinished = &ends[0], &ends[1], &ends[2], &ends[3]
		cs.Completed = ends[0]
	} else {
		cs.Completed = cs.WithoutFailure
	}
	cs.Metrics = Metrics{
		{ConvUserTurns, Describe(turns)}, {ConvDuration, Describe(dur)}, {ConvWait, Describe(wait)},
	}
	return cs
}

// SortKeys orders group keys numerically when they all are numbers.
func SortKeys(keys []string) {
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

func Ratio(a, b float64) Num {
	if b == 0 {
		return Num(math.NaN())
	}
	return Num(a / b)
}

// Compare lays out the headline figures of each group side by side:
// with --only (only, the metrics' names), the request counts, runtime,
// request rate and those metrics.
func Compare(groups []*Group, only []string) *Comparison {
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
				r.Ratios = append(r.Ratios, Ratio(v, float64(r.Values[0])))
			}
		}
		cmp.Rows = append(cmp.Rows, r)
	}
	row("requests", func(g *Group) float64 { return float64(g.Requests) })
	row("failed", func(g *Group) float64 { return float64(g.Failed) })
	row("runtime_sec", func(g *Group) float64 { return float64(g.RuntimeSec) })
	row("requests_per_sec", func(g *Group) float64 { return float64(g.RequestsPerSec) })
	if len(groups) > 0 && groups[0].GoodRequests != nil { // --slo: each input's own
		row("good_requests", func(g *Group) float64 { return float64(*g.GoodRequests) })
		row("goodput", func(g *Group) float64 { return float64(*g.Goodput) })
		row("good_conversations", func(g *Group) float64 { return float64(*g.Conversations.MetSLO) })
	}
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
				v, _ := d.Stat(st)
				return v
			})
		}
	}
	return cmp
}

// TurnGroups returns the groups of per-turn accumulators in turn order.
func TurnGroups(accs map[int]*Acc) []*Group {
	turns := make([]int, 0, len(accs))
	for t := range accs {
		turns = append(turns, t)
	}
	slices.Sort(turns)
	out := make([]*Group, 0, len(turns))
	for _, t := range turns {
		out = append(out, accs[t].Group(strconv.Itoa(t)))
	}
	return out
}
