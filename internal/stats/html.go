package stats

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WriteHTML writes a self-contained HTML report: summary tables and inline
// SVG charts (TTFT and latency CDFs, TTFT and cache hit by turn, throughput
// and latency over time). It loads nothing from the network.
func WriteHTML(w io.Writer, rep *Report) error {
	var charts []template.HTML
	cdf := func(title, metric string) {
		d, ok := rep.Summary.Metrics.Get(metric)
		if !ok || d.Count == 0 {
			return
		}
		xs, ys := cdfPoints(d, 400)
		charts = append(charts, lineChart(title, metric, "fraction of requests", []series{{"all", xs, ys}}))
	}
	cdf("TTFT distribution (CDF)", "ttft_ms")
	cdf("E2E latency distribution (CDF)", "latency_ms")
	if len(rep.turns) > 0 {
		var tx []float64
		p50, p90, p99, hit := series{name: "p50"}, series{name: "p90"}, series{name: "p99"}, series{name: "cache hit %"}
		for _, g := range rep.turns {
			t, _ := strconv.Atoi(g.Key)
			tx = append(tx, float64(t))
			d, _ := g.Metrics.Get("ttft_ms")
			p50.ys, p90.ys, p99.ys = append(p50.ys, d.P50), append(p90.ys, d.P90), append(p99.ys, d.P99)
			hit.ys = append(hit.ys, float64(g.CacheHitRate)*100)
		}
		p50.xs, p90.xs, p99.xs, hit.xs = tx, tx, tx, tx
		charts = append(charts, lineChart("TTFT by turn", "turn", "ttft_ms", []series{p50, p90, p99}))
		charts = append(charts, lineChart("Cache hit by turn (server cached_tokens / prompt_tokens)", "turn", "percent", []series{hit}))
	}
	if len(rep.series) > 0 {
		rps, tps, lat := overTime(rep.series, min(100, max(5, len(rep.series)/10)))
		charts = append(charts, lineChart("Throughput over time", "seconds since start", "per second", []series{rps, tps}))
		charts = append(charts, lineChart("Latency over time (median of requests ending in each interval)", "seconds since start", "ms", lat))
	}
	var summary strings.Builder
	if err := Render(&summary, rep, FormatTable); err != nil {
		return err
	}
	return htmlPage.Execute(w, struct {
		Rep     *Report
		Summary string
		Charts  []template.HTML
	}{rep, summary.String(), charts})
}

var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>mtstats report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;background:#fff}
h1{font-size:1.5em} h2{font-size:1.15em;margin-top:1.5em}
pre{background:#f6f8fa;padding:1em;overflow-x:auto;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:1em}
.chart{border:1px solid #ddd;padding:.5em}
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#333}
</style></head><body>
<h1>mtstats report</h1>
<p>{{.Rep.Inputs.Records}} records from {{len .Rep.Inputs.Files}} input(s){{if .Rep.Partial}} (partial){{end}}.</p>
<h2>Charts</h2>
<div class="charts">{{range .Charts}}<div class="chart">{{.}}</div>{{end}}</div>
<h2>Summary</h2>
<pre>{{.Summary}}</pre>
</body></html>
`))

type series struct {
	name   string
	xs, ys []float64
}

// cdfPoints samples the empirical CDF of the described samples at about n
// points.
func cdfPoints(d Description, n int) (xs, ys []float64) {
	step := max(1, d.Count/n)
	for i := 0; i < d.Count; i += step {
		xs = append(xs, d.at(i))
		ys = append(ys, float64(i+1)/float64(d.Count))
	}
	xs = append(xs, d.Max)
	ys = append(ys, 1)
	return xs, ys
}

// overTime buckets the requests by end time: completed requests and output
// tokens per second, and median TTFT and latency per bucket.
func overTime(pts []point, buckets int) (rps, tps series, lat []series) {
	t0, t1 := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		t0, t1 = min(t0, p.start), max(t1, p.end)
	}
	width := (t1 - t0) / float64(buckets)
	if !(width > 0) {
		width = 1
	}
	count := make([]float64, buckets)
	toks := make([]float64, buckets)
	lats := make([][]float64, buckets)
	ttfts := make([][]float64, buckets)
	for _, p := range pts {
		b := min(buckets-1, int((p.end-t0)/width))
		count[b]++
		toks[b] += p.outTokens
		lats[b] = append(lats[b], p.latMs)
		if !math.IsNaN(p.ttftMs) {
			ttfts[b] = append(ttfts[b], p.ttftMs)
		}
	}
	rps, tps = series{name: "requests/s"}, series{name: "output tokens/s"}
	l50, t50 := series{name: "latency p50"}, series{name: "ttft p50"}
	for b := range buckets {
		x := (float64(b) + 0.5) * width
		rps.xs, rps.ys = append(rps.xs, x), append(rps.ys, count[b]/width)
		tps.xs, tps.ys = append(tps.xs, x), append(tps.ys, toks[b]/width)
		if len(lats[b]) > 0 {
			slices.Sort(lats[b])
			l50.xs, l50.ys = append(l50.xs, x), append(l50.ys, Quantile(lats[b], 0.5))
		}
		if len(ttfts[b]) > 0 {
			slices.Sort(ttfts[b])
			t50.xs, t50.ys = append(t50.xs, x), append(t50.ys, Quantile(ttfts[b], 0.5))
		}
	}
	return rps, tps, []series{l50, t50}
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"}

// lineChart draws series as an SVG line chart with axes, ticks and a
// legend.
func lineChart(title, xlabel, ylabel string, ss []series) template.HTML {
	const W, H, L, R, T, B = 520.0, 320.0, 60.0, 15.0, 30.0, 45.0
	x0, x1, y1 := math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, s := range ss {
		for i := range s.xs {
			if math.IsNaN(s.ys[i]) {
				continue
			}
			x0, x1 = min(x0, s.xs[i]), max(x1, s.xs[i])
			y1 = max(y1, s.ys[i])
		}
	}
	if math.IsInf(x0, 0) {
		x0, x1, y1 = 0, 1, 1
	}
	if x1 == x0 {
		x1 = x0 + 1
	}
	if !(y1 > 0) {
		y1 = 1
	}
	y1 *= 1.05
	px := func(x float64) float64 { return L + (x-x0)/(x1-x0)*(W-L-R) }
	py := func(y float64) float64 { return H - B - y/y1*(H-T-B) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, W, H, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<text x="%g" y="18" style="font-weight:bold">%s</text>`, L, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, L, H-B, W-R, H-B)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, L, T, L, H-B)
	for i := 0; i <= 4; i++ {
		xv := x0 + float64(i)/4*(x1-x0)
		yv := float64(i) / 4 * y1
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, px(xv), H-B+15, tick(xv))
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%s</text>`, L-4, py(yv)+4, tick(yv))
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#eee"/>`, L, py(yv), W-R, py(yv))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, (L+W-R)/2, H-8, template.HTMLEscapeString(xlabel))
	fmt.Fprintf(&b, `<text x="12" y="%g" text-anchor="middle" transform="rotate(-90 12 %g)">%s</text>`, (T+H-B)/2, (T+H-B)/2, template.HTMLEscapeString(ylabel))
	for i, s := range ss {
		color := palette[i%len(palette)]
		var pts []string
		for j := range s.xs {
			if !math.IsNaN(s.ys[j]) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.xs[j]), py(s.ys[j])))
			}
		}
		fmt.Fprintf(&b, `<polyline class="series" fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color, strings.Join(pts, " "))
		if len(pts) <= 40 {
			for _, p := range pts {
				xy := strings.SplitN(p, ",", 2)
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, xy[0], xy[1], color)
			}
		}
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g">%s</text>`,
			W-R-120, T+float64(i)*15, color, W-R-105, T+float64(i)*15+9, template.HTMLEscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built from escaped parts only
}

func tick(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100 || v == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
