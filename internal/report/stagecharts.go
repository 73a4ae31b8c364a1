package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
)

// stageCharts draws staged runs or sweeps: throughput and TTFT by stage
// level with the capacity marked, latency against throughput (the knee:
// each run's points in its colour, joined in stage-level order), and for
// one run its TTFT by turn in each stage. Several runs (--compare) share
// the level axis, one line (and colour) each. A stage is placed at its
// records' stage_load, else at the level of the sweep's capacity file,
// else at its number.
func stageCharts(runs []judge.StagedRun) []ChartSpec {
	var drawn []judge.StagedRun
	for _, r := range runs {
		if len(r.Stages) >= 2 {
			drawn = append(drawn, r)
		}
	}
	if len(drawn) == 0 {
		return nil
	}
	kind, byLevel := stageKind(drawn)
	xlabel := "stage"
	if byLevel {
		xlabel = string(kind) + " (stage level)"
	}
	levels := make([][]float64, len(drawn))
	var all []float64
	for i, r := range drawn {
		levels[i] = stageLevels(r, byLevel)
		all = append(all, levels[i]...)
	}
	xs := sortedUnique(all)
	integral := !slices.ContainsFunc(xs, func(v float64) bool { return v != math.Trunc(v) })
	thr := ChartSpec{Integer: integral, Title: "Throughput by stage", Note: "successful requests per second over each stage's measured window", XLabel: xlabel, YLabel: "requests/s", Points: true, X: xs}
	ttft := ChartSpec{Integer: integral, Title: "TTFT by stage", XLabel: xlabel, YLabel: "TTFT (ms)", Points: true, X: xs}
	knee := ChartSpec{Title: "Latency against throughput (the knee)", Note: "one point per stage, joined in order of stage level: where latency climbs while throughput stops growing, the deployment saturates", XLabel: "requests/s", YLabel: "ms", Points: true, Scatter: true}
	type kneePoint struct {
		run   int
		level float64
		thr   float64
		t95   float64
		l50   float64
	}
	var kps []kneePoint
	for i, r := range drawn {
		col := func(get func(judge.StageRow) stats.Num) []*float64 {
			ys := make([]*float64, len(xs))
			for j, row := range r.Stages {
				k, _ := slices.BinarySearch(xs, levels[i][j])
				ys[k] = num(float64(get(row)))
			}
			return ys
		}
		if len(drawn) == 1 {
			thr.Series = []chartSeries{
				newSeries("throughput", col(func(r judge.StageRow) stats.Num { return r.Throughput })),
				newSeries("first half", col(func(r judge.StageRow) stats.Num { return r.FirstHalf })),
				newSeries("second half", col(func(r judge.StageRow) stats.Num { return r.SecondHalf })),
			}
			ttft.Series = []chartSeries{
				newSeries("p50", col(func(r judge.StageRow) stats.Num { return r.TTFTP50 })),
				newSeries("p95", col(func(r judge.StageRow) stats.Num { return r.TTFTP95 })),
				newSeries("p99", col(func(r judge.StageRow) stats.Num { return r.TTFTP99 })),
				newSeries("lateness p99", col(func(r judge.StageRow) stats.Num { return r.LatenessP99 })),
			}
			// Client wait beside lateness when the records kept it apart
			// (client_wait_ns; older records did not). Hidden until its
			// legend entry is clicked: a closed loop's waits are seconds
			// and would flatten the TTFT axis; the legend and the table
			// under the chart give its values.
			if slices.ContainsFunc(r.Stages, func(r judge.StageRow) bool { return !math.IsNaN(float64(r.ClientWaitP99)) }) {
				wait := newSeries("client wait p99", col(func(r judge.StageRow) stats.Num { return r.ClientWaitP99 }))
				wait.Hide = true
				ttft.Series = append(ttft.Series, wait)
			}
		} else {
			thr.Series = append(thr.Series, newSeries(r.Label+" throughput", col(func(r judge.StageRow) stats.Num { return r.Throughput })))
			ttft.Series = append(ttft.Series, newSeries(r.Label+" p95", col(func(r judge.StageRow) stats.Num { return r.TTFTP95 })))
		}
		if c := r.Capacity; byLevel && c != nil && c.Capacity > 0 {
			m := chartMark{X: c.Capacity, Label: strconv.FormatFloat(c.Capacity, 'g', 4, 64) + " " + string(c.Kind) + " capacity"}
			if len(drawn) > 1 {
				m.Label, m.Colour = r.Label+": "+m.Label, &i
			}
			thr.Marks, ttft.Marks = append(thr.Marks, m), append(ttft.Marks, m)
		}
		for j, row := range r.Stages {
			if !math.IsNaN(float64(row.Throughput)) {
				kps = append(kps, kneePoint{i, levels[i][j], float64(row.Throughput), float64(row.TTFTP95), float64(row.LatencyP50)})
			}
		}
	}
	slices.SortStableFunc(kps, func(a, b kneePoint) int { return cmp.Compare(a.thr, b.thr) })
	for _, p := range kps {
		knee.X = append(knee.X, p.thr)
	}
	// Issue 23: the knee's colours did not follow the runs' (two
	// series a run, each its own colour) and its points were not joined.
	// Each run's two series take the run's colour, latency p50 dashed,
	// and are joined in order of stage level (stage number without one).
	for i, r := range drawn {
		t95 := chartSeries{Label: "TTFT p95", Colour: &i}
		l50 := chartSeries{Label: "latency p50", Colour: &i, Dash: true}
		if len(drawn) > 1 {
			t95.Label, l50.Label = r.Label+" TTFT p95", r.Label+" latency p50"
		}
		for k, p := range kps {
			if p.run != i {
				t95.Y, l50.Y = append(t95.Y, nil), append(l50.Y, nil)
				continue
			}
			t95.Y, l50.Y = append(t95.Y, num(p.t95)), append(l50.Y, num(p.l50))
			t95.Join = append(t95.Join, k)
		}
		slices.SortStableFunc(t95.Join, func(a, b int) int { return cmp.Compare(kps[a].level, kps[b].level) })
		l50.Join = t95.Join
		knee.Series = append(knee.Series, t95, l50)
	}
	out := []ChartSpec{thr, ttft}
	if len(knee.X) >= 2 && knee.X[0] < knee.X[len(knee.X)-1] {
		out = append(out, knee)
	}
	if len(drawn) == 1 {
		if c, ok := stageTurnChart(drawn[0], levels[0]); ok {
			out = append(out, c)
		}
	}
	return out
}

// stageKind returns the kind of the runs' stage loads, and whether every
// stage has a level of that one kind to be placed at.
func stageKind(runs []judge.StagedRun) (sweep.Kind, bool) {
	var kind sweep.Kind
	for _, r := range runs {
		file := fileLevels(r.Capacity)
		for _, row := range r.Stages {
			k, _, err := sweep.ParseLoad(row.Load)
			if err != nil {
				if _, ok := file[row.Stage]; !ok || r.Capacity == nil {
					return "", false
				}
				k = r.Capacity.Kind
			}
			if kind != "" && k != kind {
				return "", false
			}
			kind = k
		}
	}
	return kind, kind != ""
}

// stageLevels returns the x of each of r's stages: its level, or its
// number when not byLevel.
func stageLevels(r judge.StagedRun, byLevel bool) []float64 {
	file := fileLevels(r.Capacity)
	out := make([]float64, len(r.Stages))
	for i, row := range r.Stages {
		out[i] = float64(row.Stage)
		if !byLevel {
			continue
		}
		if _, level, err := sweep.ParseLoad(row.Load); err == nil {
			out[i] = level
		} else {
			out[i] = file[row.Stage]
		}
	}
	return out
}

// fileLevels are the levels of a capacity file's stages, by number.
func fileLevels(c *sweep.Capacity) map[int]float64 {
	out := map[int]float64{}
	if c != nil {
		for _, j := range c.Stages {
			out[j.Stage] = j.Level
		}
	}
	return out
}

func sortedUnique(xs []float64) []float64 {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// maxTurnStages is how many stages the by-turn chart draws: more lines
// than this cannot be told apart.
const maxTurnStages = 12

// stageTurnChart draws TTFT p95 by turn, one line per stage in the order
// of their x: how a level hurts late turns (long histories) more than
// early ones.
func stageTurnChart(r judge.StagedRun, xs []float64) (ChartSpec, bool) {
	if len(r.Stages) > maxTurnStages {
		return ChartSpec{}, false
	}
	maxTurn := -1
	for _, row := range r.Stages {
		for _, g := range row.Turns {
			t, _ := strconv.Atoi(g.Key)
			maxTurn = max(maxTurn, t)
		}
	}
	if maxTurn < 1 {
		return ChartSpec{}, false
	}
	c := ChartSpec{Title: "TTFT p95 by user turn, per stage", XLabel: userTurnAxis, YLabel: "TTFT p95 (ms)", Integer: true, Points: true}
	for t := 0; t <= maxTurn; t++ {
		c.X = append(c.X, float64(t))
	}
	order := make([]int, len(r.Stages))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	for _, i := range order {
		row := r.Stages[i]
		s := chartSeries{Label: row.Load, Y: make([]*float64, maxTurn+1)}
		if s.Label == "" {
			s.Label = "stage " + strconv.Itoa(row.Stage)
		}
		for _, g := range row.Turns {
			t, _ := strconv.Atoi(g.Key)
			if d, ok := g.Metrics.Get(stats.MetricNames[stats.TTFT]); ok && d.Count > 0 {
				s.Y[t] = num(d.Quantile(0.95))
			}
		}
		c.Series = append(c.Series, s)
	}
	return c, hasValues(c)
}
