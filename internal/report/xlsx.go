package report

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/xuri/excelize/v2"
)

// MaxXLSXRows is the number of data rows an Excel sheet can hold.
const MaxXLSXRows = 1<<20 - 1

// rawColumns are the columns of the "Raw data" sheet: every field of the
// record schema (record.Fields), with the names and units of the record
// format (docs/records.md).
var rawColumns = func() []string {
	var cols []string
	for _, f := range record.Fields() {
		cols = append(cols, f.Name)
	}
	return cols
}()

// RawRow returns the "Raw data" row of r: each field's value, absent
// values as empty cells, times as RFC 3339 text with nanoseconds, lists
// as they are (setRow writes them as text).
func RawRow(r *record.Record) []any {
	fields := record.Fields()
	row := make([]any, len(fields))
	for i := range fields {
		v := fields[i].Value(r)
		if t, ok := v.(time.Time); ok {
			v = t.UTC().Format(time.RFC3339Nano)
		}
		row[i] = v
	}
	return row
}

// maxCellChars is the most characters an Excel cell holds.
const maxCellChars = 32767

// ListCell writes a list as a JSON array; past Excel's cell limit it is
// cut after a whole value and ends with "…" (a record with thousands of
// ITL gaps).
func ListCell(v []int64) string {
	b := []byte{'['}
	for i, x := range v {
		n := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, x, 10)
		if len(b) > maxCellChars-len("]") {
			return string(b[:n]) + "…"
		}
	}
	return string(append(b, ']'))
}

// WriteXLSX writes a workbook with a "Summary" sheet (the key figures and
// the describe table, overall and per group) and a "Raw data" sheet (one
// row per counted record, at most 1,048,575).
func WriteXLSX(path string, rep *Report) error {
	f, sw, err := newSummary()
	if err != nil {
		return err
	}
	defer f.Close()
	row := 0
	put := func(vals ...any) error {
		row++
		return setRow(sw, row-1, vals)
	}
	groups := append([]*stats.Group{rep.Summary}, rep.Groups...)
	for i, g := range groups {
		name := "all"
		if i > 0 {
			name = rep.By + "=" + g.Key
		}
		figures := [][]any{
			{"group", name},
			{"runtime_sec", float64(g.RuntimeSec)},
			{"requests_per_sec", float64(g.RequestsPerSec)},
			{"requests", g.Requests}, {"ok", g.OK}, {"failed", g.Failed}, {"retries", g.Retries},
			{"input_tokens_per_sec", float64(g.InputTokensPerSec)},
			{"output_tokens_per_sec", float64(g.OutputTokensPerSec)},
			{"total_tokens_per_sec", float64(g.TotalTokensPerSec)},
			{"cache_hit_rate", float64(g.CacheHitRate)},
		}
		for _, fg := range figures {
			if err := put(fg...); err != nil {
				return err
			}
		}
		header := []any{"metric"}
		for _, s := range stats.StatNames {
			header = append(header, s.Key)
		}
		if err := put(header...); err != nil {
			return err
		}
		for _, m := range []stats.Metrics{g.Metrics, g.Conversations.Metrics} {
			for _, d := range m {
				vals := []any{d.Name}
				for _, s := range stats.StatNames {
					v, ok := d.Stat(s.Key)
					if !ok {
						vals = append(vals, nil)
						continue
					}
					vals = append(vals, v)
				}
				if err := put(vals...); err != nil {
					return err
				}
			}
		}
		row++ // blank line between groups
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return saveWithRawData(f, path, rawColumns, rep.Raw)
}

// newSummary returns a new workbook and a stream writer on its first
// sheet, named "Summary".
func newSummary() (*excelize.File, *excelize.StreamWriter, error) {
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", "Summary"); err != nil {
		f.Close()
		return nil, nil, err
	}
	sw, err := f.NewStreamWriter("Summary")
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, sw, nil
}

// setRow writes vals on 0-based row r; NaN and infinities become empty
// cells, lists of integers text (listCell).
func setRow(sw *excelize.StreamWriter, r int, vals []any) error {
	for i, v := range vals {
		switch n := v.(type) {
		case float64:
			if math.IsNaN(n) || math.IsInf(n, 0) {
				vals[i] = nil
			}
		case []int64:
			vals[i] = ListCell(n)
		}
	}
	cell, _ := excelize.CoordinatesToCellName(1, r+1)
	return sw.SetRow(cell, vals)
}

// saveWithRawData adds the sheet "Raw data" (a header of columns, then
// rows, NaN and infinities as empty cells) to f and saves it as path.
func saveWithRawData(f *excelize.File, path string, columns []string, rows [][]any) error {
	if _, err := f.NewSheet("Raw data"); err != nil {
		return err
	}
	rw, err := f.NewStreamWriter("Raw data")
	if err != nil {
		return err
	}
	header := make([]any, len(columns))
	for i, c := range columns {
		header[i] = c
	}
	if err := rw.SetRow("A1", header); err != nil {
		return err
	}
	for i, r := range rows {
		if err := setRow(rw, i+1, r); err != nil {
			return err
		}
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	return saveFile(f, path)
}

// saveFile writes f to path with mode 0644, as the HTML report is written
// (excelize's SaveAs creates files 0755: issue 23).
func saveFile(f *excelize.File, path string) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("xlsx: %w", err)
	}
	if err := f.Write(out); err != nil {
		out.Close()
		return fmt.Errorf("xlsx: %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("xlsx: %s: %w", path, err)
	}
	return nil
}

// VLLMRequest is one row of the per-request statistics of vLLM's
// benchmark_serving_multi_turn.py (its RequestStats), in its field order.
type VLLMRequest struct {
	TTFTMs      float64 `json:"ttft_ms"`
	TPOTMs      float64 `json:"tpot_ms"`
	LatencyMs   float64 `json:"latency_ms"`
	StartTimeMs float64 `json:"start_time_ms"`
	// InputNumTurns is the number of messages sent.
	InputNumTurns   int   `json:"input_num_turns"`
	InputNumTokens  int64 `json:"input_num_tokens"`
	OutputNumTokens int64 `json:"output_num_tokens"`
	// OutputNumChunks counts the chunks after the first, as vLLM does.
	OutputNumChunks int `json:"output_num_chunks"`
	// OutputNumFirstChunkTokens is estimated as tokens per chunk (mtkit
	// does not count the first chunk's tokens).
	OutputNumFirstChunkTokens int64 `json:"output_num_first_chunk_tokens"`
	// ApproxCachedPercent is the server's cached prompt tokens in percent
	// of the prompt (0 when the server does not report them).
	ApproxCachedPercent float64 `json:"approx_cached_percent"`
	ConversationID      string  `json:"conversation_id"`
	ClientID            int     `json:"client_id"`
}

// VLLMRequestFrom converts the record of a request into vLLM's row; false
// for the records vLLM does not count (failed, retried, warmup, choices
// other than the first).
func VLLMRequestFrom(r *record.Record) (VLLMRequest, bool) {
	if !r.OK() || r.Retried || !r.Measured() || r.Choice != 0 {
		return VLLMRequest{}, false
	}
	v := VLLMRequest{
		TTFTMs: -1, LatencyMs: stats.Millis(r.LatencyNs), StartTimeMs: float64(r.Start.UnixNano()) / 1e6,
		InputNumTurns: r.InputMessages, InputNumTokens: stats.InputTokensOf(r), OutputNumTokens: stats.OutputTokensOf(r),
		OutputNumChunks: max(r.Chunks-1, 0), ConversationID: r.ConversationID, ClientID: r.Client,
	}
	if r.TTFTNs != nil {
		v.TTFTMs = stats.Millis(*r.TTFTNs)
	}
	if r.TPOTNs != nil {
		v.TPOTMs = *r.TPOTNs / 1e6
	}
	if r.Chunks > 0 {
		v.OutputNumFirstChunkTokens = max(1, int64(math.Round(float64(v.OutputNumTokens)/float64(r.Chunks))))
	}
	if r.CachedTokens != nil && v.InputNumTokens > 0 {
		v.ApproxCachedPercent = 100 * float64(*r.CachedTokens) / float64(v.InputNumTokens)
	}
	return v, true
}

// VLLMParam is one named value of a parameter row of vLLM's workbook.
type VLLMParam struct {
	Name  string
	Value any
}

// VLLMWorkbook is what vLLM's --excel-output writes.
type VLLMWorkbook struct {
	Params []VLLMParam // the test parameters (model, num_clients, ...)
	// Warmup are the fractions of the first requests left out of each
	// summary block (vLLM's --warmup-percentages), sorted.
	Warmup []float64
	// WarmupRuntimeSec is the --warmup-step pass's runtime, if any.
	WarmupRuntimeSec *float64
	// Verbose adds time_between_user_turns_sec, as vLLM's --verbose does.
	Verbose  bool
	Requests []VLLMRequest
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
func vllmRow(q *VLLMRequest, between float64, verbose bool) []any {
	row := []any{q.TTFTMs, q.TPOTMs, q.LatencyMs, q.StartTimeMs, q.InputNumTurns, q.InputNumTokens,
		q.OutputNumTokens, q.OutputNumChunks, q.OutputNumFirstChunkTokens, q.ApproxCachedPercent,
		q.ConversationID, q.ClientID}
	if verbose {
		row = append(row, between)
	}
	return append(row, q.StartTimeMs+q.LatencyMs)
}

// WriteVLLMXLSX writes wb in the layout of vLLM's --excel-output: sheet
// "Summary" with the parameter row, then for each warmup percentage a
// runtime row and pandas' describe() of the summarised columns (count,
// mean, std, min, 25%, 50%, 75%, 90%, plus 99% from 100 requests, 99.9%
// from 1,000, 99.99% from 10,000, max), each at vLLM's row offsets; sheet
// "Raw data" with one row per request sorted by start time.
func WriteVLLMXLSX(path string, wb *VLLMWorkbook) error {
	reqs := slices.Clone(wb.Requests)
	slices.SortStableFunc(reqs, func(a, b VLLMRequest) int { return cmp.Compare(a.StartTimeMs, b.StartTimeMs) })
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

	f, sw, err := newSummary()
	if err != nil {
		return err
	}
	defer f.Close()
	// put writes vals on 0-based row r, as pandas' startrow counts.
	put := func(r int, vals ...any) error { return setRow(sw, r, vals) }
	paramRow := func(r int, ps []VLLMParam) error {
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
		ps := []VLLMParam{{"runtime_sec", runtime}, {"requests_per_sec", float64(len(tail)) / runtime}}
		if wb.WarmupRuntimeSec != nil {
			ps = append(ps, VLLMParam{"warmup_runtime_sec", *wb.WarmupRuntimeSec},
				VLLMParam{"total_runtime_incl_warmup_sec", runtime + *wb.WarmupRuntimeSec})
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
	return saveWithRawData(f, path, columns, rows)
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
