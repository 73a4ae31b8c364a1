package report

import (
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/llmd"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
)

// FormatLLMD is llm-d-benchmark's benchmark report (schema 0.2): one
// report per stage (docs/mtstats.md).
const FormatLLMD = "llm-d"

// RecordInfo is what the records say of the runs they come from, for
// the formats that name them (llm-d's report).
type RecordInfo struct {
	RunIDs []string // in order of first appearance
	Models []string // in order of first appearance
	// StageLoads is each stage's stage_load (KIND=LEVEL), by stage.
	StageLoads map[int]string
	// ToolVersion is mtstats's version.
	ToolVersion string
}

// Add notes what r says of its run.
func (in *RecordInfo) Add(r *record.Record) {
	if n := len(in.RunIDs); n == 0 || in.RunIDs[n-1] != r.RunID && !slices.Contains(in.RunIDs, r.RunID) {
		in.RunIDs = append(in.RunIDs, r.RunID)
	}
	if r.Model != "" && !slices.Contains(in.Models, r.Model) {
		in.Models = append(in.Models, r.Model)
	}
	if r.StageLoad != "" && in.StageLoads[r.Stage] == "" {
		in.StageLoads[r.Stage] = r.StageLoad
	}
}

// renderLLMD writes one llm-d report per group of rep (mtstats groups
// the records by stage for this format), or one for the summary.
func renderLLMD(w io.Writer, rep *Report) error {
	groups := rep.Groups
	if rep.By != "stage" || len(groups) == 0 {
		groups = []*stats.Group{rep.Summary}
	}
	if rep.Summary == nil || rep.Summary.Requests == 0 {
		return errors.New("no measured requests: no llm-d report")
	}
	var out []*llmd.Report
	for _, g := range groups {
		stage, _ := strconv.Atoi(g.Key)
		out = append(out, llmdReport(rep, g, stage, rep.GroupTurns[g.Key]))
	}
	return llmd.Write(w, out)
}

// llmdReport maps one stage's figures to the schema; mtkit's own figures
// (per-turn views, cache hits and retention, lateness, conversations'
// waits) go under results.observability.mtkit.
func llmdReport(rep *Report, g *stats.Group, stage int, turns []*stats.Group) *llmd.Report {
	info := rep.Records
	run := strings.Join(info.RunIDs, "+")
	if run == "" {
		run = "mtkit"
	}
	r := &llmd.Report{Version: llmd.Version, Run: llmd.Run{UID: run, EID: run}}
	if len(rep.Groups) > 0 && rep.By == "stage" {
		r.Run.UID = run + "-stage" + strconv.Itoa(stage)
	}
	if !g.First.IsZero() {
		r.Run.Time = &llmd.RunTime{
			Start: g.First.UTC().Format(time.RFC3339Nano), End: g.Last.UTC().Format(time.RFC3339Nano),
			Duration: isoDuration(g.Last.Sub(g.First)),
		}
	}
	if len(info.Models) > 0 {
		r.Run.Description = strings.Join(info.Models, ", ") + " [" + run + "]"
	}
	m := g.Metrics
	std := llmd.LoadStandardized{
		Tool: "mtkit", ToolVersion: info.ToolVersion, Source: llmd.SourceUnknown, Stage: stage,
		InputSeqLen: seqLen(m, stats.MetricNames[stats.InputTokens]),
	}
	if std.ToolVersion == "" {
		std.ToolVersion = "unknown"
	}
	if out := seqLen(m, stats.MetricNames[stats.OutputTokens]); out.Value > 0 {
		std.OutputSeqLen = &out
	}
	if d, ok := g.Conversations.Metrics.Get(stats.ConvUserTurns); ok && d.Count > 0 && d.Max > 1 {
		turnsLen := describedLen(d)
		std.MultiTurn = &llmd.MultiTurn{Enabled: true, MaxTurns: &turnsLen}
	}
	if kind, level, err := sweep.ParseLoad(info.StageLoads[stage]); err == nil {
		switch kind {
		case sweep.Requests:
			std.RateQPS = &level
		case sweep.Clients, sweep.Users:
			n := int(level)
			std.Concurrency = &n
		}
	}
	r.Scenario = &llmd.Scenario{Load: &llmd.Load{
		Metadata:     llmd.LoadMetadata{SchemaVersion: "0.0.1", Description: info.StageLoads[stage]},
		Standardized: std,
	}}
	stat := func(name, units string) *llmd.Statistics {
		d, ok := m.Get(name)
		if !ok || d.Count == 0 {
			return nil
		}
		return llmd.NewStatistics(units, d.Mean, d.Std, d.Min, d.Max, quantileOf(&d))
	}
	failed := g.Failed
	agg := &llmd.Aggregate{
		Requests: &llmd.Requests{Total: g.Requests, Failures: &failed,
			InputLength:  stat(stats.MetricNames[stats.InputTokens], llmd.UnitCount),
			OutputLength: stat(stats.MetricNames[stats.OutputTokens], llmd.UnitCount)},
		Latency: &llmd.Latency{
			TimeToFirstToken:   stat(stats.MetricNames[stats.TTFT], llmd.UnitMs),
			TimePerOutputToken: stat(stats.MetricNames[stats.TPOT], llmd.UnitMsPerToken),
			InterTokenLatency:  stat(stats.MetricNames[stats.ITL], llmd.UnitMsPerToken),
			RequestLatency:     stat(stats.MetricNames[stats.Latency], llmd.UnitMs),
		},
		Throughput: &llmd.Throughput{
			InputTokenRate:  llmd.Rate(llmd.UnitTokensPerSec, float64(g.InputTokensPerSec)),
			OutputTokenRate: llmd.Rate(llmd.UnitTokensPerSec, float64(g.OutputTokensPerSec)),
			TotalTokenRate:  llmd.Rate(llmd.UnitTokensPerSec, float64(g.TotalTokensPerSec)),
			RequestRate:     llmd.Rate(llmd.UnitQueriesPerS, float64(g.RequestsPerSec)),
		},
	}
	r.Results.RequestPerformance = &llmd.RequestPerformance{Aggregate: agg}
	if c := g.Conversations; c.Count > 0 {
		conv := func(name, units string) *llmd.Statistics {
			d, ok := c.Metrics.Get(name)
			if !ok || d.Count == 0 {
				return nil
			}
			return llmd.NewStatistics(units, d.Mean, d.Std, d.Min, d.Max, quantileOf(&d))
		}
		succeeded, failedConv, requests := c.WithoutFailure, c.Count-c.WithoutFailure, g.Requests
		if c.Finished != nil {
			succeeded, failedConv = *c.Finished, *c.Failed+*c.Abandoned
		}
		r.Results.SessionPerformance = &llmd.SessionPerformance{Sessions: &llmd.SessionRequests{
			Total: c.Count, Succeeded: &succeeded, Failed: &failedConv, TotalEvents: &requests,
			SessionDuration:  conv(stats.ConvDuration, llmd.UnitMs),
			EventsPerSession: conv(stats.ConvUserTurns, llmd.UnitCount),
		}}
	}
	x := mtkitExtras(g, turns, info.StageLoads[stage])
	if rep.Retention != nil {
		x["cache_retention"] = rep.Retention // over the whole run, all stages
	}
	r.Results.Observability = map[string]any{"mtkit": x}
	return r
}

// mtkitExtras are mtkit's figures the schema has no field for.
func mtkitExtras(g *stats.Group, turns []*stats.Group, load string) map[string]any {
	x := map[string]any{
		"schema":                  SchemaVersion,
		"cache_hit_rate":          g.CacheHitRate,
		"cache_reported_requests": g.CacheReportedRequests,
		"retries":                 g.Retries,
		"errors":                  g.Errors,
		"runtime_sec":             g.RuntimeSec,
	}
	if load != "" {
		x["stage_load"] = load
	}
	for _, name := range []string{"lateness_ms", "client_wait_ms", "intended_latency_ms", "think_actual_ms"} {
		if d, ok := g.Metrics.Get(name); ok && d.Count > 0 {
			x[name] = d
		}
	}
	if d, ok := g.Conversations.Metrics.Get(stats.ConvWait); ok && d.Count > 0 {
		x[stats.ConvWait] = d
	}
	var per []map[string]any
	for _, t := range turns {
		row := map[string]any{
			"turn": t.Key, "requests": t.Requests, "failed": t.Failed,
			"cache_hit_rate": t.CacheHitRate, "input_tokens_per_sec": t.InputTokensPerSec,
		}
		for _, m := range []stats.Metric{stats.TTFT, stats.ITL, stats.Latency, stats.InputTokens} {
			name := stats.MetricNames[m]
			if d, ok := t.Metrics.Get(name); ok && d.Count > 0 {
				row[name] = d
			}
		}
		per = append(per, row)
	}
	if per != nil {
		x["turns"] = per
	}
	return x
}

// seqLen is a length from its description: its mean, spread and bounds.
func seqLen(m stats.Metrics, name string) llmd.SequenceLength {
	d, ok := m.Get(name)
	if !ok || d.Count == 0 {
		return llmd.SequenceLength{Distribution: llmd.DistOther, Value: 0}
	}
	return describedLen(d)
}

func describedLen(d stats.Description) llmd.SequenceLength {
	s := llmd.SequenceLength{Distribution: llmd.DistOther, Value: d.Mean}
	if d.Min == d.Max {
		s.Distribution = llmd.DistFixed
	} else if !math.IsNaN(d.Std) {
		std := d.Std
		s.StdDev = &std
	}
	lo, hi := int(d.Min), int(d.Max)
	s.Min = &lo
	if hi >= 1 {
		s.Max = &hi
	}
	return s
}

func quantileOf(d *stats.Description) func(float64) float64 {
	if !d.HasQuantile() {
		return nil
	}
	return d.Quantile
}

// isoDuration renders d as an ISO-8601 duration in seconds (PT12.5S).
func isoDuration(d time.Duration) string {
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}
