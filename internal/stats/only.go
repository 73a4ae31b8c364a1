package stats

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mtkit/mtkit/internal/record"
)

// MetricColumns are the record fields each metric's samples come from.
var MetricColumns = [numMetrics][]string{
	TTFT:            {"ttft_ns"},
	TPOT:            {"tpot_ns"},
	ITL:             {"itl_ns"},
	Latency:         {"latency_ns"},
	InputTurns:      {"input_messages"},
	InputTokens:     {"prompt_tokens", "client_prompt_tokens"},
	OutputTokens:    {"completion_tokens", "client_completion_tokens"},
	OutputChunks:    {"chunks"},
	IntendedLatency: {"intended_latency_ns", "scheduled"},
	Lateness:        {"lateness_ns", "scheduled"},
	ClientWait:      {"client_wait_ns"},
	ThinkPlanned:    {"think_planned_ns", "turn"},
	ThinkActual:     {"think_actual_ns", "turn"},
	TTFTContent:     {"ttft_content_ns"},
	ReasoningTokens: {"reasoning_tokens", "ttft_content_ns", "reasoning_chunks"},
	ReasoningChunks: {"reasoning_chunks", "ttft_content_ns"},
}

// OnlyColumns are the fields a report limited by --only reads besides its
// metrics' (and those always read: run_id, start, end): the duplicate key
// and what decides whether a record is measured, a retry or a failure.
var OnlyColumns = []string{"shard", "seq", "phase", "retried", "error_class", "choice"}

// MetricName is the --only name of m: its report name without "_ms".
func MetricName(m Metric) string { return strings.TrimSuffix(MetricNames[m], "_ms") }

// ParseOnly parses --only: comma-separated metric names (ttft or ttft_ms),
// in report order, each once. An empty spec selects nothing (nil).
func ParseOnly(spec string) ([]Metric, error) {
	if spec == "" {
		return nil, nil
	}
	var want [numMetrics]bool
	for name := range strings.SplitSeq(spec, ",") {
		name = strings.TrimSpace(name)
		m, ok := metricByName(name)
		if !ok {
			names := make([]string, numMetrics)
			for m := range numMetrics {
				names[m] = MetricName(m)
			}
			return nil, fmt.Errorf("--only %s: %q is not a metric; want some of %s", spec, name, strings.Join(names, ", "))
		}
		want[m] = true
	}
	var ms []Metric
	for m := range numMetrics {
		if want[m] {
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// metricByName finds a metric by its --only or report name.
func metricByName(name string) (Metric, bool) {
	for m := range numMetrics {
		if name == MetricNames[m] || name == MetricName(m) {
			return m, true
		}
	}
	return 0, false
}

// addSample adds the sample of metric m of the successful record r to s,
// if r has one and s is not the union of other sets.
func addSample(s *sampleSet, m Metric, r *record.Record) {
	if s.parts != nil {
		return // kept by the record's --by group
	}
	switch m {
	case TTFT:
		if r.TTFTNs != nil {
			s.add(*r.TTFTNs)
		}
	case TPOT:
		if r.TPOTNs != nil {
			s.addFloat(*r.TPOTNs / 1e6)
		}
	case ITL:
		s.addAll(r.ITLNs)
	case Latency:
		s.add(r.LatencyNs)
	case InputTurns:
		s.add(int64(r.InputMessages))
	case InputTokens:
		s.add(InputTokensOf(r))
	case OutputTokens:
		s.add(OutputTokensOf(r))
	case OutputChunks:
		s.add(int64(r.Chunks))
	case IntendedLatency:
		if !r.Scheduled.IsZero() {
			s.add(r.IntendedLatencyNs)
		}
	case Lateness:
		if !r.Scheduled.IsZero() {
			s.add(r.LatenessNs)
		}
	case ClientWait:
		if r.ClientWaitNs != nil {
			s.add(*r.ClientWaitNs)
		}
	case ThinkPlanned:
		if r.Turn > 0 {
			s.add(r.ThinkPlannedNs)
		}
	case ThinkActual:
		if r.Turn > 0 {
			s.add(r.ThinkActualNs)
		}
	case TTFTContent:
		if contentLater(r) {
			s.add(*r.TTFTContentNs)
		}
	case ReasoningTokens:
		if r.ReasoningTokens != nil && reasoned(r) {
			s.add(*r.ReasoningTokens)
		}
	case ReasoningChunks:
		if reasoned(r) {
			s.add(int64(r.ReasoningChunks))
		}
	default:
		panic(errors.New("stats: no such metric"))
	}
}

// onlyGroup is a Group of a report limited by --only, as JSON: the
// request counts, runtime and request rate, and the selected metrics.
type onlyGroup struct {
	GroupCounts
	Metrics Metrics `json:"metrics"`
}

// reasoned reports whether r streamed reasoning (a reasoning model's
// request): its reasoning figures are described.
func reasoned(r *record.Record) bool {
	return r.ReasoningChunks > 0 || contentLater(r) || r.ReasoningTokens != nil && *r.ReasoningTokens > 0
}

// contentLater reports whether r's first content token came after its
// first token (a reasoning token); older records carry ttft_content_ns
// equal to ttft_ns.
func contentLater(r *record.Record) bool {
	return r.TTFTContentNs != nil && (r.TTFTNs == nil || *r.TTFTContentNs != *r.TTFTNs)
}
