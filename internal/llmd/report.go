// Package llmd is llm-d-benchmark's standard benchmark report, schema
// version 0.2 (github.com/llm-d/llm-d-benchmark,
// llmdbenchmark/analysis/benchmark_report/schema_v0_2.py): the types of
// the document, with the fields mtkit fills, and its JSON encoding.
// Every harness llm-d-benchmark runs writes one report per load stage;
// mtstats --format llm-d writes mtkit's (docs/mtstats.md). The JSON
// Schema the tests validate against, and how it was made, are in
// testdata.
package llmd

import (
	"encoding/json"
	"io"
	"math"
)

// Version is the schema version written.
const Version = "0.2"

// Report is one benchmark report.
type Report struct {
	Version  string    `json:"version"`
	Run      Run       `json:"run"`
	Scenario *Scenario `json:"scenario,omitempty"`
	Results  Results   `json:"results"`
}

// Run identifies the run.
type Run struct {
	UID         string   `json:"uid"`
	EID         string   `json:"eid,omitempty"`
	Time        *RunTime `json:"time,omitempty"`
	Description string   `json:"description,omitempty"`
}

// RunTime is ISO-8601 times and duration.
type RunTime struct {
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	Duration string `json:"duration,omitempty"`
}

// Scenario is the workload (mtkit knows nothing of the stack it ran
// against beyond the model, which is in the load's native config).
type Scenario struct {
	Load *Load `json:"load,omitempty"`
}

// Load describes the workload.
type Load struct {
	Metadata     LoadMetadata     `json:"metadata"`
	Standardized LoadStandardized `json:"standardized"`
	Native       LoadNative       `json:"native"`
}

// LoadMetadata is the workload's metadata.
type LoadMetadata struct {
	SchemaVersion string `json:"schema_version"`
	CfgID         string `json:"cfg_id,omitempty"`
	Description   string `json:"description,omitempty"`
}

// Sources of input tokens.
const (
	SourceRandom  = "random"
	SourceSampled = "sampled"
	SourceUnknown = "unknown"
)

// LoadStandardized is the workload in the schema's terms.
type LoadStandardized struct {
	Tool         string          `json:"tool"`
	ToolVersion  string          `json:"tool_version"`
	Source       string          `json:"source"`
	Stage        int             `json:"stage"`
	InputSeqLen  SequenceLength  `json:"input_seq_len"`
	OutputSeqLen *SequenceLength `json:"output_seq_len,omitempty"`
	Prefix       *LoadPrefix     `json:"prefix,omitempty"`
	MultiTurn    *MultiTurn      `json:"multi_turn,omitempty"`
	RateQPS      *float64        `json:"rate_qps,omitempty"`
	Concurrency  *int            `json:"concurrency,omitempty"`
}

// Distributions of a SequenceLength.
const (
	DistFixed    = "fixed"
	DistGaussian = "gaussian"
	DistUniform  = "uniform"
	DistOther    = "other"
)

// SequenceLength is a length in tokens.
type SequenceLength struct {
	Distribution string   `json:"distribution"`
	Value        float64  `json:"value"`
	StdDev       *float64 `json:"std_dev,omitempty"`
	Min          *int     `json:"min,omitempty"`
	Max          *int     `json:"max,omitempty"`
}

// LoadPrefix is the shared prefixes of a workload.
type LoadPrefix struct {
	PrefixLen        SequenceLength `json:"prefix_len"`
	NumGroups        int            `json:"num_groups"`
	NumUsersPerGroup int            `json:"num_users_per_group"`
	NumPrefixes      int            `json:"num_prefixes"`
}

// MultiTurn is the multi-turn shape of a workload.
type MultiTurn struct {
	Enabled  bool            `json:"enabled"`
	MaxTurns *SequenceLength `json:"max_turns,omitempty"`
}

// LoadNative is the workload in the tool's own terms: mtkit puts the
// run's settings there (the manifest's, or an inference-perf config).
type LoadNative struct {
	Args   map[string]any `json:"args,omitempty"`
	Config any            `json:"config,omitempty"`
}

// Results are the measurements.
type Results struct {
	RequestPerformance *RequestPerformance `json:"request_performance,omitempty"`
	SessionPerformance *SessionPerformance `json:"session_performance,omitempty"`
	// Observability is the schema's open object ("real reports include
	// ad-hoc metric keys"): mtkit's own figures go under "mtkit".
	Observability map[string]any `json:"observability,omitempty"`
}

// RequestPerformance is request-level performance.
type RequestPerformance struct {
	Aggregate *Aggregate `json:"aggregate,omitempty"`
}

// Aggregate is the statistics over a stage's requests.
type Aggregate struct {
	Requests   *Requests   `json:"requests,omitempty"`
	Latency    *Latency    `json:"latency,omitempty"`
	Throughput *Throughput `json:"throughput,omitempty"`
}

// Requests counts requests and describes their lengths.
type Requests struct {
	Total        int         `json:"total"`
	Failures     *int        `json:"failures,omitempty"`
	Incomplete   *int        `json:"incomplete,omitempty"`
	InputLength  *Statistics `json:"input_length,omitempty"`
	OutputLength *Statistics `json:"output_length,omitempty"`
}

// Latency is the latency statistics.
type Latency struct {
	TimeToFirstToken   *Statistics `json:"time_to_first_token,omitempty"`
	NormalizedTPOT     *Statistics `json:"normalized_time_per_output_token,omitempty"`
	TimePerOutputToken *Statistics `json:"time_per_output_token,omitempty"`
	InterTokenLatency  *Statistics `json:"inter_token_latency,omitempty"`
	RequestLatency     *Statistics `json:"request_latency,omitempty"`
}

// Throughput is the rates.
type Throughput struct {
	InputTokenRate  *Statistics `json:"input_token_rate,omitempty"`
	OutputTokenRate *Statistics `json:"output_token_rate,omitempty"`
	TotalTokenRate  *Statistics `json:"total_token_rate,omitempty"`
	RequestRate     *Statistics `json:"request_rate,omitempty"`
}

// SessionPerformance is session-level performance (multi-turn).
type SessionPerformance struct {
	Sessions *SessionRequests `json:"sessions,omitempty"`
}

// SessionRequests counts sessions and describes them.
type SessionRequests struct {
	Total            int         `json:"total"`
	Succeeded        *int        `json:"succeeded,omitempty"`
	Failed           *int        `json:"failed,omitempty"`
	TotalEvents      *int        `json:"total_events,omitempty"`
	SessionDuration  *Statistics `json:"session_duration,omitempty"`
	EventsPerSession *Statistics `json:"events_per_session,omitempty"`
}

// Units of the schema that mtkit uses.
const (
	UnitCount        = "count"
	UnitMs           = "ms"
	UnitS            = "s"
	UnitMsPerToken   = "ms/token"
	UnitTokensPerSec = "tokens/s"
	UnitQueriesPerS  = "queries/s"
)

// Statistics describes one quantity. Figures that are not defined (NaN:
// no samples, a standard deviation of one sample) are left out.
type Statistics struct {
	Units  string   `json:"units"`
	Mean   float64  `json:"mean"`
	Stddev *float64 `json:"stddev,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	P0p1   *float64 `json:"p0p1,omitempty"`
	P1     *float64 `json:"p1,omitempty"`
	P5     *float64 `json:"p5,omitempty"`
	P10    *float64 `json:"p10,omitempty"`
	P25    *float64 `json:"p25,omitempty"`
	P50    *float64 `json:"p50,omitempty"`
	P75    *float64 `json:"p75,omitempty"`
	P90    *float64 `json:"p90,omitempty"`
	P95    *float64 `json:"p95,omitempty"`
	P99    *float64 `json:"p99,omitempty"`
	P99p9  *float64 `json:"p99p9,omitempty"`
	Max    *float64 `json:"max,omitempty"`
}

// Percentiles are the percentiles of Statistics, in field order (P0p1
// is the 0.1th); NewStatistics asks for each.
var Percentiles = []float64{0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9}

// NewStatistics describes a quantity in units from its mean, standard
// deviation, extremes and quantile function (q in [0, 1]; nil: no
// percentiles); nil when the mean is not defined.
func NewStatistics(units string, mean, std, lo, hi float64, quantile func(q float64) float64) *Statistics {
	if !finite(mean) {
		return nil
	}
	s := &Statistics{Units: units, Mean: mean, Stddev: opt(std), Min: opt(lo), Max: opt(hi)}
	if quantile != nil {
		ps := []**float64{&s.P0p1, &s.P1, &s.P5, &s.P10, &s.P25, &s.P50, &s.P75, &s.P90, &s.P95, &s.P99, &s.P99p9}
		for i, p := range Percentiles {
			*ps[i] = opt(quantile(p / 100))
		}
	}
	return s
}

// Rate is a rate known only as one figure (a run's throughput): its
// mean.
func Rate(units string, x float64) *Statistics {
	return NewStatistics(units, x, math.NaN(), math.NaN(), math.NaN(), nil)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func opt(x float64) *float64 {
	if !finite(x) {
		return nil
	}
	return &x
}

// Write writes reports as JSON, one after another as a YAML stream
// ("---" before each when there are several): llm-d-benchmark reads
// reports as YAML, of which JSON is a part.
func Write(w io.Writer, reports []*Report) error {
	for _, r := range reports {
		if len(reports) > 1 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}
