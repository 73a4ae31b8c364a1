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
	charts := serverCharts(srv)
	if len(charts) != 4 {
		t.Fatalf("%d server charts, want 4", len(charts))
	}
	t0 := float64(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).Unix())
	if want := []float64{t0, t0 + 0.5, t0 + 1}; !slices.Equal(charts[0].X, want) || !charts[0].Time {
		t.Errorf("x %v, want %v on the clock", charts[0].X, want)
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
	if serverCharts(nil) != nil {
		t.Error("charts without server metrics")
	}
}
