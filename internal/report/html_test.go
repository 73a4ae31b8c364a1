package report

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/serverstats"
	"github.com/mtkit/mtkit/internal/stats"
)

// TestHTMLServerCharts: the server's metrics are drawn on the clock, one
// line per replica, each point at its scrape time.
func TestHTMLServerCharts(t *testing.T) {
	t.Parallel()
	srv := &serverstats.Server{WindowStart: "2026-11-23T10:00:00Z", Replicas: []serverstats.ReplicaReport{
		{Replica: 0, Timeline: []serverstats.TimelinePoint{{T: 0, Running: 1, Waiting: 0, KVUsage: 0.1, HitRate: 0.5, TTFTMs: 20}, {T: 1, Running: 3, Waiting: 2, KVUsage: 0.2, HitRate: 0.75, TTFTMs: 40}}},
		{Replica: 1, Timeline: []serverstats.TimelinePoint{{T: 0.5, Running: 2, Waiting: 1, KVUsage: 0.3, HitRate: stats.Num(math.NaN()), TTFTMs: 30}}},
	}}
	// Issue 23: the server's charts were on the clock; they are in
	// seconds since the run's start, like the client's.
	runStart := float64(time.Date(2026, 11, 23, 9, 59, 58, 0, time.UTC).Unix())
	charts := serverCharts(srv, runStart)
	if len(charts) != 4 {
		t.Fatalf("%d server charts, want 4", len(charts))
	}
	for _, c := range charts {
		if want := []float64{2, 2.5, 3}; !slices.Equal(c.X, want) || c.XLabel != sinceStart {
			t.Errorf("%s: x %v (%s), want %v seconds since the run's start", c.Title, c.X, c.XLabel, want)
		}
	}
	if got := serverCharts(srv, math.NaN())[0].X; !slices.Equal(got, []float64{0, 0.5, 1}) {
		t.Errorf("without a run start: x %v, want seconds since the metrics' start", got)
	}
	queue := charts[0]
	if len(queue.Series) != 4 || queue.Series[0].Label != "replica 0 running" || *queue.Series[0].Y[2] != 3 || queue.Series[0].Y[1] != nil {
		t.Errorf("running/waiting series %+v", queue.Series)
	}
	hit := charts[2]
	if *hit.Series[0].Y[2] != 75 || hit.Series[1].Y[1] != nil {
		t.Errorf("hit-rate series: replica 0 %v, replica 1 %v (NaN must be a gap)", hit.Series[0].Y, hit.Series[1].Y)
	}
	// Issue 23: the caption named --metrics-url when the default endpoint
	// was scraped.
	for _, c := range charts {
		if strings.Contains(c.Note, "--metrics-url") {
			t.Errorf("%s: note %q names --metrics-url", c.Title, c.Note)
		}
	}
	if serverCharts(nil, runStart) != nil {
		t.Error("charts without server metrics")
	}
}

// TestChartValues: each chart's table and legend summary carry its
// numbers without a pointer over it (issue 23: a printed or screenshotted
// report read "–" in every legend): few x values one by one, percentiles
// at p50 to max, longer series as min, mean and max.
func TestChartValues(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	byTurn := ChartSpec{XLabel: "turn", YLabel: "ms", X: []float64{0, 1, 2}, Series: []chartSeries{
		{Label: "p50", Y: []*float64{f(12.346), nil, f(250.4)}},
		{Label: "p99", Y: []*float64{f(0.0123), f(3), f(4)}, Colour: intp(3)},
	}}
	pct := ChartSpec{XLabel: "percentile", YLabel: "TTFT (ms)", Percentiles: true, X: percentiles, Series: []chartSeries{{Label: "all", Y: make([]*float64, len(percentiles))}}}
	for i, p := range percentiles {
		pct.Series[0].Y[i] = f(p * 2)
	}
	long := ChartSpec{XLabel: sinceStart, YLabel: "requests/s", X: make([]float64, 20), Series: []chartSeries{{Label: "requests/s", Y: make([]*float64, 20)}}}
	for i := range long.X {
		long.X[i] = float64(i)
		long.Series[0].Y[i] = f(float64(i % 5))
	}
	for _, tc := range []struct {
		name    string
		c       ChartSpec
		head    []string
		rows    [][]string
		colours []string
		summary []string
	}{
		{"by turn", byTurn, []string{"turn", "0", "1", "2"}, [][]string{{"12.35", "–", "250"}, {"0.0123", "3.00", "4.00"}},
			[]string{"background:" + palette[0], "background:" + palette[3]}, []string{"mean 131 · max 250", "mean 2.34 · max 4.00"}},
		{"percentiles", pct, []string{"TTFT (ms)", "p50", "p90", "p99", "p99.9", "max"}, [][]string{{"100", "180", "198", "200", "200"}},
			[]string{"background:" + palette[0]}, []string{"p50 100 · p99 198"}},
		{"over time", long, []string{"requests/s", "min", "mean", "max"}, [][]string{{"0", "2.00", "4.00"}},
			[]string{"background:" + palette[0]}, []string{"mean 2.00 · max 4.00"}},
	} {
		tab := chartTable(tc.c)
		if !slices.Equal(tab.Head, tc.head) || len(tab.Rows) != len(tc.rows) {
			t.Fatalf("%s: head %q, %d rows; want %q, %d", tc.name, tab.Head, len(tab.Rows), tc.head, len(tc.rows))
		}
		for i, r := range tab.Rows {
			if !slices.Equal(r.Cells, tc.rows[i]) || string(r.Colour) != tc.colours[i] {
				t.Errorf("%s: row %d %q %s, want %q %s", tc.name, i, r.Cells, r.Colour, tc.rows[i], tc.colours[i])
			}
			if got := seriesSummary(tc.c, tc.c.Series[i]); got != tc.summary[i] {
				t.Errorf("%s: legend summary %q, want %q", tc.name, got, tc.summary[i])
			}
		}
	}
	if got := seriesSummary(byTurn, chartSeries{Y: []*float64{nil}}); got != "no data" {
		t.Errorf("empty series: %q", got)
	}
}

func intp(i int) *int { return &i }
