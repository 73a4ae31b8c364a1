package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/stats"
)

// stages is the per-stage table.
func (t *textWriter) stages(title string, rows []judge.StageRow) {
	t.heading(title)
	withLoad := slices.ContainsFunc(rows, func(r judge.StageRow) bool { return r.Load != "" })
	header := []string{"stage", "requests", "failed", "starts/s", "requests/s", "throughput", "ttft_p50", "ttft_p95", "ttft_p99", "itl_p50", "itl_p99",
		"latency_p50", "latency_p99", "lateness_p99", "cache_hit", "steady", "client_limited"}
	// Client wait beside lateness when the records kept it apart
	// (client_wait_ns; older records did not).
	withWait := slices.ContainsFunc(rows, func(r judge.StageRow) bool { return !math.IsNaN(float64(r.ClientWaitP99)) })
	waitAt := slices.Index(header, "lateness_p99") + 1
	if withWait {
		header = slices.Insert(header, waitAt, "client_wait_p99")
	}
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
		f := func(x stats.Num) string { return fmtNum(float64(x)) }
		starts := f(r.SessionStartsPerSec)
		if r.AskedRate != nil {
			starts += " (asked " + fmtNum(*r.AskedRate) + ")"
		}
		row := []string{strconv.Itoa(r.Stage), strconv.Itoa(r.Requests), strconv.Itoa(r.Failed), starts, f(r.RequestsPerSec), f(r.Throughput),
			f(r.TTFTP50), f(r.TTFTP95), f(r.TTFTP99), f(r.ITLP50), f(r.ITLP99), f(r.LatencyP50), f(r.LatencyP99),
			f(r.LatenessP99), fmtPct(r.CacheHitRate), yes(r.Steady), yes(r.ClientLimited)}
		if withWait {
			row = slices.Insert(row, waitAt, f(r.ClientWaitP99))
		}
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
func (t *textWriter) stagedRuns(runs []judge.StagedRun) {
	var with []judge.StagedRun
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
