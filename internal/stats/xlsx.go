package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/xuri/excelize/v2"
)

// maxXLSXRows is the number of data rows an Excel sheet can hold.
const maxXLSXRows = 1<<20 - 1

// rawColumns are the columns of the "Raw data" sheet.
var rawColumns = []string{"run_id", "shard", "seq", "conversation_id", "turn", "attempt", "client", "phase",
	"start", "ttft_ms", "tpot_ms", "latency_ms", "intended_latency_ms", "lateness_ms",
	"prompt_tokens", "completion_tokens", "cached_tokens", "chunks", "status", "error_class", "retried"}

// rawRow returns the "Raw data" row of r; absent values are empty cells.
func rawRow(r *record.Record) []any {
	opt := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	var ttft, tpot any
	if r.TTFTNs != nil {
		ttft = ms(*r.TTFTNs)
	}
	if r.TPOTNs != nil {
		tpot = *r.TPOTNs / 1e6
	}
	return []any{r.RunID, r.Shard, r.Seq, r.ConversationID, r.Turn, r.Attempt, r.Client, r.Phase,
		r.Start.UTC().Format(time.RFC3339Nano), ttft, tpot, ms(r.LatencyNs), ms(r.IntendedLatencyNs), ms(r.LatenessNs),
		opt(r.PromptTokens), opt(r.CompletionTokens), opt(r.CachedTokens), r.Chunks, r.Status, r.ErrorClass, r.Retried}
}

// WriteXLSX writes a workbook with a "Summary" sheet (the key figures and
// the describe table, overall and per group) and a "Raw data" sheet (one
// row per counted record, at most 1,048,575).
func WriteXLSX(path string, rep *Report) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Summary"); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter("Summary")
	if err != nil {
		return err
	}
	row := 1
	put := func(vals ...any) error {
		cell, _ := excelize.CoordinatesToCellName(1, row)
		row++
		for i, v := range vals {
			if n, ok := v.(float64); ok && (math.IsNaN(n) || math.IsInf(n, 0)) {
				vals[i] = nil
			}
		}
		return sw.SetRow(cell, vals)
	}
	groups := append([]*Group{rep.Summary}, rep.Groups...)
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
		for _, s := range statNames {
			header = append(header, s.key)
		}
		if err := put(header...); err != nil {
			return err
		}
		for _, m := range []Metrics{g.Metrics, g.Conversations.Metrics} {
			for _, d := range m {
				vals := []any{d.Name}
				for _, s := range statNames {
					v, ok := d.stat(s.key)
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
	if _, err := f.NewSheet("Raw data"); err != nil {
		return err
	}
	rw, err := f.NewStreamWriter("Raw data")
	if err != nil {
		return err
	}
	header := make([]any, len(rawColumns))
	for i, c := range rawColumns {
		header[i] = c
	}
	if err := rw.SetRow("A1", header); err != nil {
		return err
	}
	for i, r := range rep.raw {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := rw.SetRow(cell, r); err != nil {
			return err
		}
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	if err := f.SaveAs(path); err != nil {
		return fmt.Errorf("xlsx: %w", err)
	}
	return nil
}
