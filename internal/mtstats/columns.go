package mtstats

import "github.com/mtkit/mtkit/internal/stats"
import "github.com/mtkit/mtkit/internal/record"
import "github.com/mtkit/mtkit/internal/report"

// unreadColumns are the record fields the report does not read unless an
// option asks for them (--where, --by, --user-gaps, --xlsx, --format
// llm-d) or the cache retention pass needs them: every other
// field is read, a field added to the record included.
var unreadColumns = map[string]bool{
	"model": true, "first_token": true,
	"dropped_messages": true, "max_tokens": true, "min_tokens": true,
	"finish_reason": true, "status": true, "error": true, "server_extra": true,
	"client": true,
}

// columns returns the record fields the report of o needs, or nil for
// every field (--xlsx, whose raw sheet shows them all).
func columns(o *Options, filter stats.Filter) (*record.Columns, error) {
	if o.XLSX != "" || o.allColumns {
		return nil, nil
	}
	var names []string
	fields := record.Fields()
	if o.only != nil {
		names = append(names, stats.OnlyColumns...)
		for _, m := range o.only {
			names = append(names, stats.MetricColumns[m]...)
		}
	} else {
		for _, f := range fields {
			if !unreadColumns[f.Name] {
				names = append(names, f.Name)
			}
		}
	}
	for _, c := range filter {
		names = append(names, fields[c.Field].Name)
	}
	switch o.By {
	case "client", "turn", "phase":
		names = append(names, o.By)
	case "conversation":
		names = append(names, "conversation_id")
	case "", "run", "file": // run_id is always read
	default:
		if _, ok := stats.FieldIndex[o.By]; ok {
			names = append(names, o.By)
		}
	}
	if o.UserGaps {
		names = append(names, "client", "attempt", "choice")
	}
	if o.only == nil && !o.NoRetention {
		// The cache retention pass finds a record's conversation by its
		// client's last one (retention.Pass.Add).
		names = append(names, "client")
	}
	if o.Format == report.FormatLLMD {
		names = append(names, "model") // the report names it
	}
	return record.NewColumns(names...)
}
