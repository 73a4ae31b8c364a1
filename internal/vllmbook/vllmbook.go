// Package vllmbook writes the workbook of vLLM's --excel-output
// (benchmark_serving_multi_turn.py) from vllmcompat's request rows. mtstats
// writes it (--xlsx-layout vllm); mtrun's --excel-output runs mtstats, so
// that excelize is not linked into mtrun.
package vllmbook

import (
	"cmp"
	"math"
	"slices"

	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/vllmcompat"
	"github.com/mtkit/mtkit/internal/workbook"
)

// Workbook is what vLLM's --excel-output writes.
type Workbook struct {
	Params []vllmcompat.Param // the test parameters (model, num_clients, ...)
	// Warmup are the fractions of the first requests left out of each
	// summary block (vLLM's --warmup-percentages), sorted.
	Warmup []float64
	// WarmupRuntimeSec is the --warmup-step pass's runtime, if any.
	WarmupRuntimeSec *float64
	// Verbose adds time_between_user_turns_sec, as vLLM's --verbose does.
	Verbose  bool
	Requests []vllmcompat.Request
}

// vllmRawColumns are vLLM's "Raw data" columns (RequestStats, then the
// verbose column, then end_time_ms).
var vllmRawColumns = []string{"ttft_ms", "tpot_ms", "latency_ms", "start_time_ms", "input_num_turns",
	"input_num_tokens", "output_num_tokens", "output_num_chunks", "output_num_first_chunk_tokens",
	"approx_cached_percent", "conversation_id", "client_id"}

// vllmSummarised are the columns vLLM describes in the summary (the raw
// columns less start/end times, first-chunk tokens, cache, ids).
var vllmSummarised = []string{"ttft_ms", "tpot_ms", "latency_ms", "input_num_turns", "input_num_tokens",
	"output_num_tokens", "output_num_chunks"}

// vllmRow is a request's "Raw data" row; between is NaN for a
// conversation's first request.
func vllmRow(q *vllmcompat.Request, between float64, verbose bool) []any {
	row := []any{q.TTFTMs, q.TPOTMs, q.LatencyMs, q.StartTimeMs, q.InputNumTurns, q.InputNumTokens,
		q.OutputNumTokens, q.OutputNumChunks, q.OutputNumFirstChunkTokens, q.ApproxCachedPercent,
		q.ConversationID, q.ClientID}
	if verbose {
		row = append(row, between)
	}
	return append(row, q.StartTimeMs+q.LatencyMs)
}

// WriteXLSX writes wb in the layout of vLLM's --excel-output: sheet
// "Summary" with the parameter row, then for each warmup percentage a
// runtime row and pandas' describe() of the summarised columns (count,
// mean, std, min, 25%, 50%, 75%, 90%, plus 99% from 100 requests, 99.9%
// from 1,000, 99.99% from 10,000, max), each at vLLM's row offsets; sheet
// "Raw data" with one row per request sorted by start time.
func WriteXLSX(path string, wb *Workbook) error {
	reqs := slices.Clone(wb.Requests)
	slices.SortStableFunc(reqs, func(a, b vllmcompat.Request) int { return cmp.Compare(a.StartTimeMs, b.StartTimeMs) })
	between := make([]float64, len(reqs))
	last := map[string]float64{}
	for i, q := range reqs {
		between[i] = math.NaN()
		if t, ok := last[q.ConversationID]; ok {
			between[i] = (q.StartTimeMs - t) / 1000
		}
		last[q.ConversationID] = q.StartTimeMs
	}
	columns := slices.Clone(vllmRawColumns)
	summarised := slices.Clone(vllmSummarised)
	if wb.Verbose {
		columns = append(columns, "time_between_user_turns_sec")
		summarised = append(summarised, "time_between_user_turns_sec")
	}
	columns = append(columns, "end_time_ms")
	rows := make([][]any, len(reqs))
	for i := range reqs {
		rows[i] = vllmRow(&reqs[i], between[i], wb.Verbose)
	}

	f, sw, err := workbook.NewSummary()
	if err != nil {
		return err
	}
	defer f.Close()
	// put writes vals on 0-based row r, as pandas' startrow counts.
	put := func(r int, vals ...any) error { return workbook.SetRow(sw, r, vals) }
	paramRow := func(r int, ps []vllmcompat.Param) error {
		names, vals := make([]any, len(ps)), make([]any, len(ps))
		for i, p := range ps {
			names[i], vals[i] = p.Name, p.Value
		}
		if err := put(r, names...); err != nil {
			return err
		}
		return put(r+1, vals...)
	}
	start := 0
	if err := paramRow(start, wb.Params); err != nil {
		return err
	}
	start += 1 + 3
	col := map[string]int{}
	for i, c := range columns {
		col[c] = i
	}
	for _, p := range wb.Warmup {
		tail := rows[int(p*float64(len(rows))):]
		if len(tail) == 0 {
			break
		}
		runtime := (tail[len(tail)-1][col["end_time_ms"]].(float64) - tail[0][col["start_time_ms"]].(float64)) / 1000
		ps := []vllmcompat.Param{{Name: "runtime_sec", Value: runtime}, {Name: "requests_per_sec", Value: float64(len(tail)) / runtime}}
		if wb.WarmupRuntimeSec != nil {
			ps = append(ps, vllmcompat.Param{Name: vllmcompat.WarmupRuntimeParam, Value: *wb.WarmupRuntimeSec},
				vllmcompat.Param{Name: "total_runtime_incl_warmup_sec", Value: runtime + *wb.WarmupRuntimeSec})
		}
		if err := paramRow(start, ps); err != nil {
			return err
		}
		start += 1 + 2
		pcts, labels := []float64{0.25, 0.5, 0.75, 0.9}, []any{"25%", "50%", "75%", "90%"}
		for _, t := range []struct {
			n     int
			q     float64
			label string
		}{{100, 0.99, "99%"}, {1000, 0.999, "99.9%"}, {10000, 0.9999, "99.99%"}} {
			if len(tail) >= t.n {
				pcts, labels = append(pcts, t.q), append(labels, t.label)
			}
		}
		header := append([]any{nil, "count", "mean", "std", "min"}, labels...)
		if err := put(start, append(header, "max")...); err != nil {
			return err
		}
		for i, name := range summarised {
			xs := make([]float64, 0, len(tail))
			for _, row := range tail {
				if x := toFloat(row[col[name]]); !math.IsNaN(x) {
					xs = append(xs, x)
				}
			}
			d := stats.Describe(xs)
			vals := []any{name, float64(d.Count), d.Mean, d.Std, d.Min}
			for _, q := range pcts {
				vals = append(vals, d.Quantile(q))
			}
			if err := put(start+1+i, append(vals, d.Max)...); err != nil {
				return err
			}
		}
		start += len(summarised) + 3
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return workbook.SaveWithRawData(f, path, columns, rows)
}

// toFloat is a raw cell's number (NaN for none).
func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return math.NaN()
}
