package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
)

// TestHTMLStages: a sweep's stages are drawn by level, in level order
// whatever order they ran in, with the knee chart of latency against
// throughput; levels come from the records' stage_load, else from the
// capacity file, else the stage numbers are the x.
func TestHTMLStages(t *testing.T) {
	t.Parallel()
	rows := []judge.StageRow{
		{Stage: 1, Throughput: 10, FirstHalf: 10, SecondHalf: 10, TTFTP95: 20},
		{Stage: 2, Throughput: 20, FirstHalf: 20, SecondHalf: 20, TTFTP95: 21},
		{Stage: 3, Throughput: 30, FirstHalf: 31, SecondHalf: 29, TTFTP95: 60},
		{Stage: 4, Throughput: 25, FirstHalf: 25, SecondHalf: 25, TTFTP95: 25},
	}
	withLoads := slices.Clone(rows)
	for i, l := range []string{"clients=1", "clients=2", "clients=4", "clients=3"} {
		withLoads[i].Load = l
	}
	capa := &sweep.Capacity{Kind: sweep.Clients, Capacity: 3, Stages: []sweep.Judged{{Stage: 1, Level: 1}, {Stage: 2, Level: 2}, {Stage: 3, Level: 4}, {Stage: 4, Level: 3}}}
	for _, tc := range []struct {
		name string
		run  judge.StagedRun
	}{
		{"capacity file", judge.StagedRun{Stages: rows, Capacity: capa}},
		{"stage loads", judge.StagedRun{Stages: withLoads, Capacity: &sweep.Capacity{Kind: sweep.Clients, Capacity: 3}}},
	} {
		charts := stageCharts([]judge.StagedRun{tc.run})
		if len(charts) != 3 {
			t.Fatalf("%s: %d stage charts, want 3", tc.name, len(charts))
		}
		thr := charts[0]
		if !slices.Equal(thr.X, []float64{1, 2, 3, 4}) || *thr.Series[0].Y[2] != 25 || *thr.Series[0].Y[3] != 30 {
			t.Errorf("%s: throughput by level: x %v, y %v", tc.name, thr.X, thr.Series[0].Y)
		}
		if thr.XLabel != "clients (stage level)" || len(thr.Marks) != 1 || thr.Marks[0].X != 3 {
			t.Errorf("%s: x label %q, marks %+v; want clients and the capacity at 3", tc.name, thr.XLabel, thr.Marks)
		}
		knee := charts[2]
		if !slices.Equal(knee.X, []float64{10, 20, 25, 30}) || *knee.Series[0].Y[3] != 60 {
			t.Errorf("%s: knee: x %v, TTFT p95 %v", tc.name, knee.X, knee.Series[0].Y)
		}
	}
	if got := stageCharts([]judge.StagedRun{{Stages: rows}})[0]; !slices.Equal(got.X, []float64{1, 2, 3, 4}) || got.XLabel != "stage" || got.Marks != nil {
		t.Errorf("without levels, x %v (%s), marks %v: want stage numbers, no mark", got.X, got.XLabel, got.Marks)
	}
	if stageCharts([]judge.StagedRun{{Stages: rows[:1]}}) != nil {
		t.Error("charts for a run of one stage")
	}
}

// TestHTMLStagesCompare: two sweeps share the level axis (the union of
// their levels, gaps where one did not run a level), one line and one
// capacity mark each; their knee points stay apart, in their run's colour
// (issue 23: each knee series had a colour of its own), joined in order of
// stage level even where throughput falls as the level rises.
func TestHTMLStagesCompare(t *testing.T) {
	t.Parallel()
	a := judge.StagedRun{Label: "off", Capacity: &sweep.Capacity{Kind: sweep.Clients, Capacity: 2}, Stages: []judge.StageRow{
		{Stage: 1, Load: "clients=1", Throughput: 10, TTFTP95: 20},
		{Stage: 2, Load: "clients=2", Throughput: 20, TTFTP95: 30},
		{Stage: 3, Load: "clients=4", Throughput: 21, TTFTP95: 90},
	}}
	b := judge.StagedRun{Label: "on", Capacity: &sweep.Capacity{Kind: sweep.Clients, Capacity: 6}, Stages: []judge.StageRow{
		{Stage: 1, Load: "clients=2", Throughput: 19, TTFTP95: 15},
		{Stage: 2, Load: "clients=8", Throughput: 55, TTFTP95: 80},
		{Stage: 3, Load: "clients=6", Throughput: 60, TTFTP95: 25},
	}}
	charts := stageCharts([]judge.StagedRun{a, b})
	if len(charts) != 3 {
		t.Fatalf("%d charts, want throughput, TTFT and the knee", len(charts))
	}
	thr := charts[0]
	if !slices.Equal(thr.X, []float64{1, 2, 4, 6, 8}) || len(thr.Series) != 2 {
		t.Fatalf("x %v, %d series; want the union of levels and one series per run", thr.X, len(thr.Series))
	}
	off, on := thr.Series[0], thr.Series[1]
	if off.Label != "off throughput" || *off.Y[1] != 20 || off.Y[3] != nil || on.Y[0] != nil || *on.Y[3] != 60 {
		t.Errorf("series: %s %v, %s %v", off.Label, off.Y, on.Label, on.Y)
	}
	if len(thr.Marks) != 2 || thr.Marks[0].Label != "off: 2 clients capacity" || thr.Marks[1].X != 6 {
		t.Errorf("marks %+v", thr.Marks)
	}
	for i, m := range thr.Marks {
		if m.Colour == nil || *m.Colour != i {
			t.Errorf("mark %q: colour %v, want run %d's", m.Label, m.Colour, i)
		}
	}
	knee := charts[2]
	if !slices.Equal(knee.X, []float64{10, 19, 20, 21, 55, 60}) || len(knee.Series) != 4 {
		t.Fatalf("knee x %v, %d series", knee.X, len(knee.Series))
	}
	if knee.Series[0].Y[1] != nil || *knee.Series[2].Y[1] != 15 || *knee.Series[0].Y[3] != 90 {
		t.Errorf("knee TTFT p95: off %v, on %v", knee.Series[0].Y, knee.Series[2].Y)
	}
	for i, want := range []struct {
		label  string
		colour int
		dash   bool
		join   []int
	}{
		{"off TTFT p95", 0, false, []int{0, 2, 3}},
		{"off latency p50", 0, true, []int{0, 2, 3}},
		{"on TTFT p95", 1, false, []int{1, 5, 4}}, // levels 2, 6, 8: 19, 60, 55 req/s
		{"on latency p50", 1, true, []int{1, 5, 4}},
	} {
		s := knee.Series[i]
		if s.Label != want.label || s.colourIndex(i) != want.colour || thr.Series[want.colour].colourIndex(want.colour) != want.colour ||
			s.Dash != want.dash || !slices.Equal(s.Join, want.join) {
			t.Errorf("knee series %d: %q colour %d dash %v join %v; want %+v", i, s.Label, s.colourIndex(i), s.Dash, s.Join, want)
		}
	}
	// Mixed kinds cannot share an axis: stage numbers.
	b.Stages[0].Load = "rate=2"
	if got := stageCharts([]judge.StagedRun{a, b})[0]; got.XLabel != "stage" || got.Marks != nil {
		t.Errorf("mixed kinds: x label %q, marks %v", got.XLabel, got.Marks)
	}
}

// TestJudgeLoads: stages with loads of one kind are judged as a sweep;
// anything else is not.
func TestJudgeLoads(t *testing.T) {
	t.Parallel()
	met, missed := true, false
	rows := []judge.StageRow{
		{Stage: 1, Load: "clients=2", Requests: 10, Throughput: 10, FirstHalf: 10, SecondHalf: 10, MeetsSLO: &met},
		{Stage: 2, Load: "clients=4", Requests: 10, Throughput: 20, FirstHalf: 20, SecondHalf: 20, MeetsSLO: &met},
		{Stage: 3, Load: "clients=8", Requests: 10, Throughput: 21, FirstHalf: 21, SecondHalf: 21, MeetsSLO: &missed},
	}
	objs, err := judge.ParseSLO("ttft_p95<=70ms")
	if err != nil {
		t.Fatal(err)
	}
	c := judge.JudgeLoads(rows, objs, sweep.Criteria{})
	if c == nil || c.Kind != sweep.Clients || c.Capacity != 4 || c.Failed == nil || *c.Failed != 8 || len(c.Objectives) != 1 {
		t.Fatalf("judged %+v; want capacity 4 clients, 8 failed", c)
	}
	for name, bad := range map[string][]judge.StageRow{
		"one stage":    rows[:1],
		"no load":      {rows[0], {Stage: 2, Throughput: 3}},
		"mixed kinds":  {rows[0], {Stage: 2, Load: "rate=3", Throughput: 3}},
		"garbage load": {rows[0], {Stage: 2, Load: "clients=x"}},
	} {
		if c := judge.JudgeLoads(bad, objs, sweep.Criteria{}); c != nil {
			t.Errorf("%s: judged %+v", name, c)
		}
	}
}

// TestHTMLStageTurns: one run's TTFT p95 by turn has a line per stage,
// named by its load and in the order of the levels, whatever order the
// stages ran in.
func TestHTMLStageTurns(t *testing.T) {
	t.Parallel()
	s := judge.NewStages(nil)
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for i, st := range []struct {
		stage int
		load  string
		ttft  int64 // ms, turn 0; turn 1 takes twice as long
	}{{1, "clients=2", 10}, {2, "clients=8", 40}, {3, "clients=4", 20}} {
		for turn := range 2 {
			for k := range 4 {
				at := t0.Add(time.Duration(i*10+turn*4+k) * time.Second)
				s.Add(&record.Record{RunID: "r", Seq: int64(i*8 + turn*4 + k), ConversationID: "c", Turn: turn, Stage: st.stage, StageLoad: st.load,
					Start: at, End: at.Add(time.Second), TTFTNs: record.Ptr(st.ttft * int64(turn+1) * 1e6), LatencyNs: 1e9})
			}
		}
	}
	rows := s.Rows()
	c, ok := stageTurnChart(judge.StagedRun{Stages: rows}, []float64{2, 8, 4})
	if !ok || !slices.Equal(c.X, []float64{0, 1}) || len(c.Series) != 3 {
		t.Fatalf("chart %v: x %v, %d series", ok, c.X, len(c.Series))
	}
	for i, want := range []struct {
		label  string
		t0, t1 float64
	}{{"clients=2", 10, 20}, {"clients=4", 20, 40}, {"clients=8", 40, 80}} {
		got := c.Series[i]
		if got.Label != want.label || *got.Y[0] != want.t0 || *got.Y[1] != want.t1 {
			t.Errorf("series %d: %s %v %v, want %+v", i, got.Label, *got.Y[0], *got.Y[1], want)
		}
	}
}

// TestHTMLStagesClientWait: one run's TTFT-by-stage chart carries the
// client wait p99 beside lateness p99 when the stages have it (a gap for a
// stage without it), hidden until its legend entry is clicked, and has no
// such series when no stage has it (older records), in the chart data and
// in the page's CHARTS.
func TestHTMLStagesClientWait(t *testing.T) {
	t.Parallel()
	nan := stats.Num(math.NaN())
	for _, tc := range []struct {
		name string
		wait []stats.Num // by stage
		want []*float64  // nil: no series
	}{
		{"known", []stats.Num{0, 900, 1500}, []*float64{ptr(0), ptr(900), ptr(1500)}},
		{"known for some stages", []stats.Num{nan, 900, 1500}, []*float64{nil, ptr(900), ptr(1500)}},
		{"older records", []stats.Num{nan, nan, nan}, nil},
	} {
		var rows []judge.StageRow
		for i, w := range tc.wait {
			rows = append(rows, judge.StageRow{Stage: i + 1, Load: fmt.Sprintf("users=%d", 8*(i+1)), Throughput: stats.Num(10 * (i + 1)),
				TTFTP50: 20, TTFTP95: 30, TTFTP99: 40, LatenessP99: 0.5, LatencyP50: 100, ClientWaitP99: w})
		}
		ttft := stageCharts([]judge.StagedRun{{Stages: rows}})[1]
		i := slices.IndexFunc(ttft.Series, func(s chartSeries) bool { return s.Label == "client wait p99" })
		late := slices.IndexFunc(ttft.Series, func(s chartSeries) bool { return s.Label == "lateness p99" })
		if tc.want == nil {
			if i >= 0 {
				t.Errorf("%s: client wait series %+v, want none", tc.name, ttft.Series[i])
			}
		} else if i != late+1 || !ttft.Series[i].Hide || !slices.EqualFunc(ttft.Series[i].Y, tc.want, func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }) {
			t.Errorf("%s: client wait is series %d (lateness %d) of %+v; want %v, hidden, after lateness", tc.name, i, late, ttft.Series, tc.want)
		}
		var page bytes.Buffer
		if err := WriteHTML(&page, &Report{Summary: &stats.Group{}, Stages: rows}); err != nil {
			t.Fatal(err)
		}
		_, js, _ := strings.Cut(page.String(), "const CHARTS = ")
		js, _, _ = strings.Cut(js, ";\n")
		var charts []ChartSpec
		if err := json.Unmarshal([]byte(js), &charts); err != nil {
			t.Fatalf("%s: CHARTS: %v", tc.name, err)
		}
		got := slices.ContainsFunc(charts[1].Series, func(s chartSeries) bool { return s.Label == "client wait p99" && s.Hide })
		if got != (tc.want != nil) || !strings.Contains(page.String(), "show: !s.hide") {
			t.Errorf("%s: the page's TTFT-by-stage chart has a hidden client wait series: %v, want %v", tc.name, got, tc.want != nil)
		}
	}
}

func ptr(x float64) *float64 { return &x }
