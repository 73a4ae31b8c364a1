package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/serverstats"
	"github.com/mtkit/mtkit/internal/stats"
)

//go:embed htmlassets/uPlot.iife.min.js
var uplotJS string

//go:embed htmlassets/uPlot.min.css
var uplotCSS string

// ChartSpec is one chart of the HTML report, drawn by uPlot in the page:
// every series shares the x values; a null y is a gap.
type ChartSpec struct {
	Title   string `json:"title"`
	Note    string `json:"note,omitempty"`
	XLabel  string `json:"xlabel"`
	YLabel  string `json:"ylabel"`
	Integer bool   `json:"integer,omitempty"` // x ticks are whole numbers (turns)
	Percent bool   `json:"percent,omitempty"` // y is a percentage, 0 to 100
	Points  bool   `json:"points,omitempty"`  // mark every point
	// Scatter: points only, no lines (but a series' Join).
	Scatter bool `json:"scatter,omitempty"`
	// Percentiles: x is a percentile (the table gives p50 to max).
	Percentiles bool          `json:"percentiles,omitempty"`
	X           []float64     `json:"x"`
	Series      []chartSeries `json:"series"`
	// Marks are vertical lines at x values, such as a sweep's capacity;
	// their labels are listed under the chart, never drawn on it, so
	// they cannot overlap each other or the ticks whatever their number.
	Marks []chartMark `json:"marks,omitempty"`
}

// chartMark is a labelled vertical line of a chart.
type chartMark struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
	// Colour is the palette index of the mark's run; nil: no run's.
	Colour *int `json:"colour,omitempty"`
}

// style is the CSS of a mark's swatch in the list under its chart.
func (m chartMark) style() template.CSS {
	c := markColour
	if m.Colour != nil {
		c = colour(*m.Colour)
	}
	return template.CSS("border-color:" + c)
}

type chartSeries struct {
	Label string     `json:"label"`
	Y     []*float64 `json:"y"`
	// Colour is the palette index of the series; nil: its own index.
	// Charts with several series per run give each run's the run's.
	Colour *int `json:"colour,omitempty"`
	// Dash draws the series (its line, Join line and legend marker)
	// dashed, with hollow points; Dot dotted, for a third series of one
	// colour.
	Dash bool `json:"dash,omitempty"`
	Dot  bool `json:"dot,omitempty"`
	// Hide draws the series only once its legend entry is clicked (and
	// leaves it out of the y range until then): a figure whose scale
	// would flatten the others'. The legend and the table show its values.
	Hide bool `json:"hide,omitempty"`
	// Join, on a scatter chart, are indices of X: a line joins the
	// series' points in this order.
	Join []int `json:"join,omitempty"`
	// Summary is what the legend shows while the pointer is off the
	// chart (seriesSummary).
	Summary string `json:"summary,omitempty"`
}

// colourIndex is the palette index of series number i of its chart.
func (s chartSeries) colourIndex(i int) int {
	if s.Colour != nil {
		return *s.Colour
	}
	return i
}

// num returns x for a chart, nil (a gap) when it is not a number.
func num(x float64) *float64 { return stats.Finite(x) }

// run is the data of one input (or of all inputs) for the charts.
type run struct {
	Label  string
	Sum    *stats.Group
	turns  []*stats.Group
	series []stats.Point
	// start is the first request's start, unix seconds (NaN without
	// series): time 0 of the run's charts over time.
	start float64
}

// Start is the run's start for the page header: UTC, ISO 8601.
func (r run) Start() string {
	if math.IsNaN(r.start) {
		return ""
	}
	// Milliseconds, truncated as time formats them; unix seconds in a
	// float64 are exact to a quarter of a microsecond, hence the 0.5 µs.
	sec, frac := math.Modf(r.start)
	return time.Unix(int64(sec), int64(math.Floor(frac*1e3+5e-4))*1e6).UTC().Format("2006-01-02T15:04:05.000Z")
}

// WriteHTML writes a self-contained HTML report: the summary, and charts
// drawn in the page by the embedded uPlot library (any point on hover; a
// summary in each legend and a table of values under each chart without
// it, so a print or a screenshot carries the numbers): the throughput and
// latencies over time in seconds since the run's start (given in the
// header), TTFT, latency and ITL by percentile, TTFT, ITL and cache hit by
// turn, each with one line per input under --compare; session affinity
// when records carry a backend. It loads nothing from the network.
func WriteHTML(w io.Writer, rep *Report) error {
	runs := []run{{Label: "all", Sum: rep.Summary, turns: rep.Turns, series: rep.Series}}
	if rep.Compare != nil {
		runs = runs[:0]
		for _, g := range rep.Groups {
			runs = append(runs, run{Label: g.Key, Sum: g, turns: rep.GroupTurns[g.Key], series: rep.GroupSeries[g.Key]})
		}
	}
	for i := range runs {
		runs[i].start = math.NaN()
		if len(runs[i].series) > 0 {
			runs[i].start, _ = pointSpan(runs[i].series)
		}
	}
	staged := rep.StagedRuns
	if len(rep.Stages) > 0 {
		staged = []judge.StagedRun{{Stages: rep.Stages, Capacity: rep.Capacity}}
	}
	charts := stageCharts(staged)
	charts = append(charts, overTimeCharts(runs)...)
	if rep.Compare == nil {
		srv := serverCharts(rep.Server, runs[0].start)
		if len(srv) > 0 && math.IsNaN(runs[0].start) {
			runs[0].start = serverStart(rep.Server)
		}
		charts = append(charts, srv...)
	}
	for _, m := range []struct{ metric, title, ylabel string }{
		{"ttft_ms", "TTFT by percentile", "TTFT (ms)"},
		{"latency_ms", "End-to-end latency by percentile", "latency (ms)"},
		{"itl_ms", "Inter-token latency by percentile", "ITL (ms)"},
	} {
		if c, ok := percentileChart(runs, m.metric, m.title, m.ylabel); ok {
			c.Percentiles = true
			charts = append(charts, c)
		}
	}
	charts = append(charts, turnCharts(runs)...)
	rets := rep.RetentionByInput
	if rep.Retention != nil {
		rets = []LabeledRetention{{Key: "all", Result: rep.Retention}}
	}
	charts = append(charts, retentionCharts(rets)...)
	for _, c := range charts {
		for i := range c.Series {
			c.Series[i].Summary = seriesSummary(c, c.Series[i])
		}
	}
	data, err := json.Marshal(charts) // escapes <, > and & inside the script
	if err != nil {
		return err
	}
	pal, err := json.Marshal(palette)
	if err != nil {
		return err
	}
	var summary strings.Builder
	if err := Render(&summary, rep, FormatTable); err != nil {
		return err
	}
	boxes := make([]chartBox, len(charts))
	for i, c := range charts {
		boxes[i] = chartBox{Title: c.Title, Note: c.Note, Table: chartTable(c)}
		for _, m := range c.Marks {
			boxes[i].Marks = append(boxes[i].Marks, markItem{m.Label, m.style()})
		}
	}
	return htmlPage.Execute(w, htmlData{rep, runs, summary.String(), boxes, template.JS(data), template.JS(pal), template.JS(uplotJS), template.CSS(uplotCSS)})
}

// chartBox is what the page template writes of a chart: its title, note,
// the labels of its marks and its table of values; the page script draws
// the chart itself into the box.
type chartBox struct {
	Title, Note string
	Marks       []markItem
	Table       valueTable
}

type markItem struct {
	Label string
	Style template.CSS
}

// overTimeCharts buckets each run's requests by end time: requests and
// output tokens per second, and TTFT and latency percentiles per bucket,
// in seconds since each run's start (issue 23: one run was drawn on the
// clock while a comparison was not).
func overTimeCharts(runs []run) []ChartSpec {
	var withSeries []run
	for _, r := range runs {
		if len(r.series) > 0 {
			withSeries = append(withSeries, r)
		}
	}
	if len(withSeries) == 0 {
		return nil
	}
	// One bucket width for all runs: about 40 buckets over the longest.
	longest := 0.0
	for _, r := range withSeries {
		t0, t1 := pointSpan(r.series)
		longest = max(longest, t1-t0)
	}
	width := niceWidth(longest / 40)
	// Issue 23: the per-second charts did not say over what they count.
	bin := strconv.FormatFloat(width, 'g', 4, 64) + " s"
	rps := ChartSpec{Title: "Requests completed per second", Note: "requests ending in each " + bin + " interval, divided by " + bin, YLabel: "requests/s"}
	tps := ChartSpec{Title: "Output tokens per second", Note: "output tokens of the requests ending in each " + bin + " interval, divided by " + bin, YLabel: "tokens/s"}
	ttftC := ChartSpec{Title: "TTFT over time", Note: "percentiles of the requests ending in each " + bin + " interval", YLabel: "TTFT (ms)"}
	lat := ChartSpec{Title: "End-to-end latency over time", Note: "percentiles of the requests ending in each " + bin + " interval", YLabel: "latency (ms)"}
	for _, c := range []*ChartSpec{&rps, &tps, &ttftC, &lat} {
		c.XLabel = sinceStart
	}
	n := int(math.Ceil(longest/width)) + 1
	for b := range n {
		x := (float64(b) + 0.5) * width
		rps.X, tps.X, ttftC.X, lat.X = append(rps.X, x), append(tps.X, x), append(ttftC.X, x), append(lat.X, x)
	}
	for _, r := range withSeries {
		t0 := r.start
		count, toks := make([]float64, n), make([]float64, n)
		lats, ttfts := make([][]float64, n), make([][]float64, n)
		for _, p := range r.series {
			b := min(n-1, max(0, int((p.End-t0)/width)))
			count[b]++
			toks[b] += p.OutTokens
			lats[b] = append(lats[b], p.LatMs)
			if !math.IsNaN(p.TTFTMs) {
				ttfts[b] = append(ttfts[b], p.TTFTMs)
			}
		}
		name := func(s string) string {
			if len(withSeries) == 1 {
				return s
			}
			return r.Label + " " + s
		}
		rs, ts := chartSeries{Label: name("requests/s")}, chartSeries{Label: name("tokens/s")}
		t50, t99 := chartSeries{Label: name("TTFT p50")}, chartSeries{Label: name("TTFT p99")}
		l50, l99 := chartSeries{Label: name("latency p50")}, chartSeries{Label: name("latency p99")}
		last := int((pointEnd(r.series) - t0) / width)
		for b := range n {
			if b > last {
				rs.Y, ts.Y = append(rs.Y, nil), append(ts.Y, nil)
			} else {
				rs.Y, ts.Y = append(rs.Y, num(count[b]/width)), append(ts.Y, num(toks[b]/width))
			}
			slices.Sort(ttfts[b])
			slices.Sort(lats[b])
			t50.Y, t99.Y = append(t50.Y, quantileOrNil(ttfts[b], 0.5)), append(t99.Y, quantileOrNil(ttfts[b], 0.99))
			l50.Y, l99.Y = append(l50.Y, quantileOrNil(lats[b], 0.5)), append(l99.Y, quantileOrNil(lats[b], 0.99))
		}
		rps.Series, tps.Series = append(rps.Series, rs), append(tps.Series, ts)
		if len(withSeries) == 1 {
			ttftC.Series, lat.Series = append(ttftC.Series, t50, t99), append(lat.Series, l50, l99)
		} else {
			ttftC.Series, lat.Series = append(ttftC.Series, t50), append(lat.Series, l50)
		}
	}
	return []ChartSpec{rps, tps, ttftC, lat}
}

// sinceStart is the x label of every chart over time.
const sinceStart = "seconds since the run's start"

// serverStart is the start of the server metrics' window, unix seconds;
// NaN when it has none.
func serverStart(srv *serverstats.Server) float64 {
	if srv == nil {
		return math.NaN()
	}
	start, err := time.Parse(time.RFC3339Nano, srv.WindowStart)
	if err != nil {
		return math.NaN()
	}
	return float64(start.UnixNano()) / 1e9
}

// serverCharts draws the server's own metrics over time, one line per
// replica, in seconds since runStart (unix seconds; NaN: the metrics'
// own start) like the client's charts above them: running and waiting
// requests, KV-cache usage, the prefix-cache hit rate of each scrape
// interval and the mean TTFT of the requests started in it.
func serverCharts(srv *serverstats.Server, runStart float64) []ChartSpec {
	if srv == nil || len(srv.Replicas) == 0 {
		return nil
	}
	ws := serverStart(srv)
	if math.IsNaN(ws) {
		return nil
	}
	if math.IsNaN(runStart) {
		runStart = ws
	}
	t0 := ws - runStart
	var xs []float64
	for _, r := range srv.Replicas {
		for _, p := range r.Timeline {
			xs = append(xs, t0+p.T)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	at := func(x float64) int { i, _ := slices.BinarySearch(xs, x); return i }
	// Issue 23: the caption named --metrics-url when the default endpoint
	// (the --url server's /metrics) was scraped.
	note := "scraped by mtrun from the server's Prometheus /metrics"
	queue := ChartSpec{Title: "Server: running and waiting requests", Note: note, XLabel: sinceStart, YLabel: "requests", X: xs}
	kv := ChartSpec{Title: "Server: KV-cache usage", Note: note, XLabel: sinceStart, YLabel: "%", Percent: true, X: xs}
	hit := ChartSpec{Title: "Server: prefix-cache hit rate per interval", Note: "counter deltas between scrapes", XLabel: sinceStart, YLabel: "%", Percent: true, X: xs}
	ttft := ChartSpec{Title: "TTFT of the requests started in each interval", Note: "mean, per replica's scrape interval", XLabel: sinceStart, YLabel: "TTFT (ms)", X: xs}
	for _, r := range srv.Replicas {
		name := func(s string) string {
			if len(srv.Replicas) == 1 {
				return s
			}
			return fmt.Sprintf("replica %d %s", r.Replica, s)
		}
		run, wait := chartSeries{Label: name("running"), Y: make([]*float64, len(xs))}, chartSeries{Label: name("waiting"), Y: make([]*float64, len(xs))}
		kvs, hs, ts := chartSeries{Label: name("KV usage"), Y: make([]*float64, len(xs))}, chartSeries{Label: name("hit rate"), Y: make([]*float64, len(xs))}, chartSeries{Label: name("TTFT mean"), Y: make([]*float64, len(xs))}
		for _, p := range r.Timeline {
			i := at(t0 + p.T)
			run.Y[i], wait.Y[i] = num(float64(p.Running)), num(float64(p.Waiting))
			kvs.Y[i], hs.Y[i], ts.Y[i] = num(float64(p.KVUsage)*100), num(float64(p.HitRate)*100), num(float64(p.TTFTMs))
		}
		queue.Series = append(queue.Series, run, wait)
		kv.Series, hit.Series, ttft.Series = append(kv.Series, kvs), append(hit.Series, hs), append(ttft.Series, ts)
	}
	var out []ChartSpec
	for _, c := range []ChartSpec{queue, kv, hit, ttft} {
		if hasValues(c) {
			out = append(out, c)
		}
	}
	return out
}

// pointSpan returns the first start and the last end of pts.
func pointSpan(pts []stats.Point) (t0, t1 float64) {
	t0, t1 = math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		t0, t1 = min(t0, p.Start), max(t1, p.End)
	}
	return t0, t1
}

// pointEnd returns the last end of pts.
func pointEnd(pts []stats.Point) float64 { _, t1 := pointSpan(pts); return t1 }

// niceWidth rounds a bucket width up to 1, 2 or 5 times a power of ten.
func niceWidth(w float64) float64 {
	if !(w > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= w {
			return m * p
		}
	}
	return 10 * p
}

func quantileOrNil(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	return num(stats.Quantile(sorted, p))
}

// percentiles are the x values of the percentile charts: every half
// percent, then the tail.
var percentiles = func() []float64 {
	var ps []float64
	for p := 0.0; p < 99; p += 0.5 {
		ps = append(ps, p)
	}
	return append(ps, 99, 99.5, 99.9, 99.99, 100)
}()

// percentileChart draws a metric's value at each percentile, one line
// per run: the quantile function, read as "p% of requests took at most y".
func percentileChart(runs []run, metric, title, ylabel string) (ChartSpec, bool) {
	c := ChartSpec{Title: title, Note: "p% of the samples are at most the value", XLabel: "percentile", YLabel: ylabel, X: percentiles}
	for _, r := range runs {
		d, ok := r.Sum.Metrics.Get(metric)
		if !ok || d.Count == 0 || !d.HasQuantile() {
			continue
		}
		s := chartSeries{Label: r.Label}
		for _, p := range percentiles {
			s.Y = append(s.Y, num(d.Quantile(p/100)))
		}
		c.Series = append(c.Series, s)
	}
	return c, len(c.Series) > 0
}

// userTurnAxis is the x label of the charts by turn: the records' turn,
// which counts requests, where vLLM's turns count messages (issue 23).
const userTurnAxis = "user turn (request of the conversation, from 0)"

// turnCharts draws TTFT, ITL and the prefix-cache hit rate by turn.
func turnCharts(runs []run) []ChartSpec {
	maxTurn := -1
	for _, r := range runs {
		for _, g := range r.turns {
			t, _ := strconv.Atoi(g.Key)
			maxTurn = max(maxTurn, t)
		}
	}
	if maxTurn < 0 {
		return nil
	}
	x := make([]float64, maxTurn+1)
	for i := range x {
		x[i] = float64(i)
	}
	ttft := ChartSpec{Title: "TTFT by user turn", XLabel: userTurnAxis, YLabel: "ms", Integer: true, Points: true, X: x}
	itl := ChartSpec{Title: "Inter-token latency by user turn", XLabel: userTurnAxis, YLabel: "ms", Integer: true, Points: true, X: x}
	hit := ChartSpec{Title: "Prefix-cache hit by user turn", Note: "server cached_tokens / prompt_tokens", XLabel: userTurnAxis, YLabel: "%", Integer: true, Percent: true, Points: true, X: x}
	for _, r := range runs {
		byTurn := make([]*stats.Group, maxTurn+1)
		for _, g := range r.turns {
			t, _ := strconv.Atoi(g.Key)
			byTurn[t] = g
		}
		get := func(metric string, q func(stats.Description) float64) []*float64 {
			ys := make([]*float64, len(byTurn))
			for t, g := range byTurn {
				if g == nil {
					continue
				}
				if d, ok := g.Metrics.Get(metric); ok && d.Count > 0 {
					ys[t] = num(q(d))
				}
			}
			return ys
		}
		prefix := ""
		if len(runs) > 1 {
			prefix = r.Label + " "
		}
		p50 := func(d stats.Description) float64 { return d.P50 }
		p99 := func(d stats.Description) float64 { return d.P99 }
		ttft.Series = append(ttft.Series, newSeries(prefix+"p50", get("ttft_ms", p50)))
		itl.Series = append(itl.Series, newSeries(prefix+"p50", get("itl_ms", p50)))
		if len(runs) == 1 {
			ttft.Series = append(ttft.Series, newSeries("p90", get("ttft_ms", func(d stats.Description) float64 { return d.P90 })), newSeries("p99", get("ttft_ms", p99)))
			itl.Series = append(itl.Series, newSeries("p99", get("itl_ms", p99)))
		}
		hs := chartSeries{Label: strings.TrimSpace(prefix + "cache hit")}
		for _, g := range byTurn {
			if g == nil {
				hs.Y = append(hs.Y, nil)
				continue
			}
			hs.Y = append(hs.Y, num(float64(g.CacheHitRate)*100))
		}
		hit.Series = append(hit.Series, hs)
	}
	out := []ChartSpec{ttft}
	if hasValues(itl) {
		out = append(out, itl)
	}
	if hasValues(hit) {
		out = append(out, hit)
	}
	return out
}

func hasValues(c ChartSpec) bool {
	for _, s := range c.Series {
		for _, y := range s.Y {
			if y != nil {
				return true
			}
		}
	}
	return false
}

var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mtstats report</title>
<style>{{.Style}}</style>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em 2em;color:#1d2433;background:#fff}
h1{font-size:1.45em;margin-bottom:.2em} h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #e3e6ec;padding-bottom:.2em}
.sub{color:#5b6475;margin-top:0}
.cards{display:flex;flex-wrap:wrap;gap:.8em;margin:1em 0}
.card{border:1px solid #e3e6ec;border-radius:6px;padding:.6em .9em;min-width:9em}
.card .v{font-size:1.35em;font-weight:600} .card .k{color:#5b6475;font-size:.8em}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:1.2em}
.chart{border:1px solid #e3e6ec;border-radius:6px;padding:.6em}
.chart .title{font-weight:600;text-align:center;margin:.2em 0}
.chart .note{color:#5b6475;font-size:.8em;margin:0 0 .3em 0}
.marks{display:flex;flex-wrap:wrap;gap:.2em 1.2em;list-style:none;padding:0;margin:.3em 0;font-size:.85em}
.mark .dash{display:inline-block;width:1.6em;height:0;border-top:2px dashed;vertical-align:middle;margin-right:.4em}
table.values{font-size:.8em;margin-top:.4em}
table.values .sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:middle}
@media print{
body{margin:0;font-size:11px}
.hint{display:none}
.charts{display:block}
.chart{break-inside:avoid;page-break-inside:avoid;margin-bottom:1em}
pre{white-space:pre-wrap;font-size:9px}
}
table{border-collapse:collapse;font-size:.9em} td,th{border:1px solid #e3e6ec;padding:.3em .6em;text-align:right} th{background:#f5f7fa}
td:first-child,th:first-child{text-align:left}
.u-legend td,.u-legend th{border:0;padding:0 .2em;background:none}
pre{background:#f5f7fa;padding:1em;overflow-x:auto;font-size:12px}
.u-title{font-size:14px !important}
</style></head><body>
<h1>mtstats report</h1>
<p class="sub">{{.Rep.Inputs.Records}} records from {{len .Rep.Inputs.Files}} input(s){{if .Rep.Partial}} (interrupted: partial input){{else if .Rep.Live}} (live: input still being read){{end}}.
{{if eq (len .Runs) 1}}{{with (index .Runs 0).Start}}Start: <time class="start">{{.}}</time> (UTC), the start of the first request counted; charts over time are in seconds since then.{{end}}{{else}}Charts over time are in seconds since each input's start, the start of its first request counted (UTC):{{range $i, $r := .Runs}}{{with $r.Start}}{{if $i}},{{end}} {{$r.Label}} <time class="start">{{.}}</time>{{end}}{{end}}.{{end}}
The table under each chart gives its values<span class="hint">; hover a chart to read any point</span>.</p>
{{range .Runs}}{{with .Sum}}
<div class="cards">{{if gt (len $.Runs) 1}}<div class="card"><div class="k">input</div><div class="v">{{$.Label .}}</div></div>{{end}}
<div class="card"><div class="k">requests (failed)</div><div class="v">{{.Requests}} ({{.Failed}})</div></div>
<div class="card"><div class="k">requests/s</div><div class="v">{{printf "%.2f" .RequestsPerSec}}</div></div>
<div class="card"><div class="k">output tokens/s</div><div class="v">{{printf "%.1f" .OutputTokensPerSec}}</div></div>
<div class="card"><div class="k">TTFT p50 / p99 (ms)</div><div class="v">{{$.Quantiles . "ttft_ms"}}</div></div>
{{if .Metrics.Has "ttft_content_ms"}}<div class="card"><div class="k">first content token p50 / p99 (ms)</div><div class="v">{{$.Quantiles . "ttft_content_ms"}}</div></div>{{end}}
<div class="card"><div class="k">ITL p50 / p99 (ms)</div><div class="v">{{$.Quantiles . "itl_ms"}}</div></div>
<div class="card"><div class="k">prefix-cache hit</div><div class="v">{{$.Pct .CacheHitRate}}</div></div>
{{with $.SLOOf .}}<div class="card"><div class="k">SLO; goodput</div><div class="v">{{if .Met}}met{{else}}NOT MET{{end}}; {{printf "%.2f" .Goodput}} req/s</div></div>{{end}}
</div>{{end}}{{end}}
<h2>Charts</h2>
<div class="charts" id="charts">{{range .Boxes}}
<div class="chart"><div class="title">{{.Title}}</div>{{with .Note}}<p class="note">{{.}}</p>{{end}}<div class="plot"></div>
{{- with .Marks}}
<ul class="marks">{{range .}}<li class="mark"><span class="dash" style="{{.Style}}"></span>{{.Label}}</li>{{end}}</ul>{{end}}
<table class="values"><tr>{{range .Table.Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Table.Rows}}<tr><td><span class="sw" style="{{.Colour}}"></span>{{.Label}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
</div>
{{with .Rep.Affinity}}
<h2>Session affinity</h2>
<p class="sub">From the records' backend (mtrun --backend-header): a user turn (request) moved when it went to another backend than the conversation's request before it.</p>
<table><tr><th></th><th>requests</th><th>TTFT p50 (ms)</th><th>TTFT p90 (ms)</th><th>prefix-cache hit</th></tr>
<tr><td>stayed</td><td>{{.Stayed.Requests}}</td><td>{{printf "%.2f" .Stayed.TTFTP50Ms}}</td><td>{{printf "%.2f" .Stayed.TTFTP90Ms}}</td><td>{{$.Pct .Stayed.CacheHitRate}}</td></tr>
<tr><td>moved</td><td>{{.MovedTurns.Requests}}</td><td>{{printf "%.2f" .MovedTurns.TTFTP50Ms}}</td><td>{{printf "%.2f" .MovedTurns.TTFTP90Ms}}</td><td>{{$.Pct .MovedTurns.CacheHitRate}}</td></tr>
</table>
<p>{{.Moved}} of {{.Turns}} requests after a conversation's first moved ({{$.Pct .MovedShare}}) across {{.Backends}} backends; {{.Changed}} of {{.Conversations}} conversations changed backend at least once.</p>
{{end}}
<h2>Summary</h2>
<pre>{{.Summary}}</pre>
<script>{{.Script}}</script>
<script>
const CHARTS = {{.Charts}};
const PALETTE = {{.Palette}};
const fmt = v => v == null ? "–" : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
const colour = (s, i) => PALETTE[(s.colour ?? i) % PALETTE.length];
const dashOf = s => s.dash ? [6, 4] : s.dot ? [2, 3] : undefined;
const boxes = document.querySelectorAll("#charts > .chart");
CHARTS.forEach((c, ci) => {
  const box = boxes[ci].querySelector(".plot");
  const xAxis = {label: c.xlabel, stroke: "#1d2433", grid: {stroke: "#eef0f4"}};
  if (c.integer) { xAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]; xAxis.values = (u, vals) => vals.map(v => Number.isInteger(v) ? v : ""); }
  const yRange = (u, lo, hi) => [0, hi > 0 ? (c.percent ? Math.min(100, hi * 1.05) : hi * 1.05) : 1];
  // Off the chart, the legend shows each series' summary, not "–".
  const opts = {
    width: 580, height: 300,
    scales: {x: {time: false}, y: {range: yRange}},
    axes: [xAxis, {label: c.ylabel, size: 64, stroke: "#1d2433", grid: {stroke: "#eef0f4"}}],
    series: [{label: c.xlabel, value: (u, v, si, idx) => idx == null ? "" : fmt(v)}].concat(
      c.series.map((s, i) => ({label: s.label, show: !s.hide, stroke: colour(s, i), width: 1.6, spanGaps: true, dash: dashOf(s),
        points: {show: !!c.points, size: c.scatter ? 8 : 5, fill: dashOf(s) ? "#fff" : undefined}, paths: c.scatter ? () => null : undefined,
        value: (u, v, si, idx) => idx == null ? s.summary : fmt(v)}))),
  };
  const draw = [];
  // Marks: dashed lines only; their labels are the list under the chart.
  if (c.marks) draw.push(u => {
    const ctx = u.ctx; ctx.save(); ctx.lineWidth = devicePixelRatio; ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
    for (const m of c.marks) {
      const x = u.valToPos(m.x, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.strokeStyle = m.colour == null ? "#5b6475" : PALETTE[m.colour % PALETTE.length];
      ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
    }
    ctx.restore();
  });
  // Joins: a scatter series' points in the order Go gives (stage order).
  if (c.series.some(s => s.join)) draw.push(u => {
    const ctx = u.ctx; ctx.save();
    ctx.beginPath(); ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height); ctx.clip();
    c.series.forEach((s, i) => {
      if (!s.join || !u.series[i + 1].show) return;
      ctx.strokeStyle = colour(s, i); ctx.lineWidth = 1.6 * devicePixelRatio;
      ctx.setLineDash((dashOf(s) || []).map(d => d * devicePixelRatio));
      ctx.beginPath();
      let first = true;
      for (const k of s.join) {
        if (s.y[k] == null) continue;
        const x = u.valToPos(c.x[k], "x", true), y = u.valToPos(s.y[k], "y", true);
        if (first) ctx.moveTo(x, y); else ctx.lineTo(x, y);
        first = false;
      }
      ctx.stroke();
    });
    ctx.restore();
  });
  if (draw.length) opts.hooks = {draw};
  new uPlot(opts, [c.x].concat(c.series.map(s => s.y)), box);
});
</script>
</body></html>
`))

// htmlData is what the page template reads.
type htmlData struct {
	Rep     *Report
	Runs    []run
	Summary string
	Boxes   []chartBox
	Charts  template.JS
	Palette template.JS
	Script  template.JS
	Style   template.CSS
}

// Label is the key of a run's summary group in the cards.
func (htmlData) Label(g *stats.Group) string { return g.Key }

// Quantiles is "p50 / p99" of a metric, in ms.
func (htmlData) Quantiles(g *stats.Group, metric string) string {
	d, ok := g.Metrics.Get(metric)
	if !ok || d.Count == 0 {
		return "n/a"
	}
	return fmtNum(d.P50) + " / " + fmtNum(d.P99)
}

// SLOOf is the SLO verdict of a run's summary group: its own under
// --compare, the report's otherwise; nil without --slo.
func (d htmlData) SLOOf(g *stats.Group) *judge.SLOReport {
	if s, ok := g.SLO.(*judge.SLOReport); ok {
		return s
	}
	if g == d.Rep.Summary {
		return d.Rep.SLO
	}
	return nil
}

// Pct is a share as a percentage.
func (htmlData) Pct(x stats.Num) string { return fmtPct(x) }
