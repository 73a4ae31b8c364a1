package stats

import "github.com/mtkit/mtkit/internal/record"

// summaryColumns are the record fields the report reads whatever the
// options: identity and dedup, phase, timing, sizes, outcome, the fields
// of the segments, stages and session-affinity views. The rest (model,
// first_token, ttft_content_ns, reasoning counts, max/min tokens,
// finish_reason, status, error text, server_extra, verify_mismatch,
// attempt, choice, client) are read only when an option needs them.
var summaryColumns = []string{
	"run_id", "shard", "seq", "conversation_id", "turn", "phase",
	"segment", "segments", "host",
	"scheduled", "start", "end",
	"ttft_ns", "tpot_ns", "itl_ns", "latency_ns", "intended_latency_ns", "lateness_ns",
	"think_planned_ns", "think_actual_ns",
	"prompt_tokens", "completion_tokens", "cached_tokens",
	"client_prompt_tokens", "client_completion_tokens", "input_messages", "chunks",
	"error_class", "retried", "backend", "stage",
}

// columns returns the record fields the report of o needs, or nil for
// every field (--xlsx, whose raw sheet shows them all).
func columns(o *Options, filter Filter) (*record.Columns, error) {
	if o.XLSX != "" || o.allColumns {
		return nil, nil
	}
	names := append([]string(nil), summaryColumns...)
	fields := record.Fields()
	for _, c := range filter {
		names = append(names, fields[c.field].Name)
	}
	switch o.By {
	case "client":
		names = append(names, "client")
	case "", "turn", "conversation", "phase", "run", "file":
	default:
		if _, ok := fieldIndex[o.By]; ok {
			names = append(names, o.By)
		}
	}
	if o.UserGaps {
		names = append(names, "client", "attempt", "choice")
	}
	return record.NewColumns(names...)
}
