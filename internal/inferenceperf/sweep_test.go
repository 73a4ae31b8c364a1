package inferenceperf

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/tokenize"
)

// TestSaturation: the in-flight count sampled every half second falls
// by 2, 4 and 6 requests in three intervals: the rates are 4, 8 and 12
// requests a second, and their 50th percentile is 8.
func TestSaturation(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var spans []Span
	add := func(n int, end time.Duration) {
		for range n {
			spans = append(spans, Span{Start: t0, End: t0.Add(end)})
		}
	}
	add(2, 700*time.Millisecond)  // gone by the 1 s sample
	add(4, 1200*time.Millisecond) // gone by 1.5 s
	add(6, 1900*time.Millisecond) // gone by 2 s
	for _, tc := range []struct {
		pct, want float64
	}{{50, 8}, {0, 4}, {100, 12}, {95, 11.6}} {
		got, err := Saturation(spans, 10*time.Second, tc.pct)
		if err != nil || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("p%g: %g, %v; want %g", tc.pct, got, err, tc.want)
		}
	}
	// The probe is measured until its timeout only.
	if _, err := Saturation(spans, 1200*time.Millisecond, 50); err == nil {
		t.Error("a probe cut before its second fall gave a saturation rate")
	}
	if _, err := Saturation(nil, time.Minute, 95); err == nil {
		t.Error("no requests: no error")
	}
}

// TestSweepStages: inference-perf's numpy.linspace(1, sat, n) and
// 1 + sat - numpy.geomspace(sat, 1, n), rounded to two decimals.
func TestSweepStages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		geometric bool
		want      []float64
	}{
		{false, []float64{1, 3.25, 5.5, 7.75, 10}},
		{true, []float64{1, 5.38, 7.84, 9.22, 10}},
	} {
		s := Sweep{Geometric: tc.geometric, NumStages: 5, StageDuration: time.Minute}
		got := s.Stages(10)
		for i, st := range got {
			if st.Rate != tc.want[i] || st.Duration != time.Minute {
				t.Errorf("geometric %t: stage %d %+v, want rate %g", tc.geometric, i, st, tc.want[i])
			}
		}
	}
}

// TestSweepConfig: load.sweep parses with inference-perf's defaults, plans
// its probe (num_requests in 5 s) and replans the generated stages.
func TestSweepConfig(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "vllm-config-shared-prefix-multi-turn.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "  stages:\n  - rate: 20                      # Send all 20 users' requests per second\n    duration: 5\n",
		"  sweep:\n    type: geometric\n    num_requests: 100\n", 1)
	c, err := Parse("f.yml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := Sweep{Geometric: true, NumRequests: 100, Timeout: time.Minute, NumStages: 5, StageDuration: 180 * time.Second, Percentile: 95}
	if c.Load.Sweep == nil || *c.Load.Sweep != want {
		t.Fatalf("sweep %+v, want %+v", c.Load.Sweep, want)
	}
	tok, err := tokenize.Load(tokenize.Default)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plan(tok, tokenize.Default, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Probe || len(p.Stages) != 1 || p.Stages[0].Rate != 20 || len(p.Schedule.Times(0)) != 100 {
		t.Fatalf("probe plan: %+v; want 100 requests in 5 s", p.Stages)
	}
	q, err := p.Replan(c.Load.Sweep.Stages(12))
	if err != nil {
		t.Fatal(err)
	}
	if q.Probe || len(q.Stages) != 5 || q.Stages[4].Rate != 12 || q.TextSeed != p.TextSeed || q.ArrivalSeed != p.ArrivalSeed {
		t.Errorf("replanned: %+v", q.Stages)
	}
	if _, err := Parse("f.yml", []byte(strings.Replace(text, "    type: geometric\n", "", 1))); err == nil || !strings.Contains(err.Error(), "load.sweep.type: missing") {
		t.Errorf("sweep without type: %v", err)
	}
}
