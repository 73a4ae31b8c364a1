package report

import (
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/workbook"
)

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
// as they are (SetRow writes them as text).
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

// WriteXLSX writes a workbook with a "Summary" sheet (the key figures and
// the describe table, overall and per group) and a "Raw data" sheet (one
// row per counted record, at most 1,048,575).
func WriteXLSX(path string, rep *Report) error {
	f, sw, err := workbook.NewSummary()
	if err != nil {
		return err
	}
	defer f.Close()
	row := 0
	put := func(vals ...any) error {
		row++
		return workbook.SetRow(sw, row-1, vals)
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
	return workbook.SaveWithRawData(f, path, rawColumns, rep.Raw)
}
