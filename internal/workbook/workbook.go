// Package workbook writes Excel workbooks over excelize in the layout
// mtkit's two workbooks share (mtstats --xlsx and mtrun's vLLM-compatible
// --excel-output): a "Summary" sheet streamed row by row, a "Raw data"
// sheet of one row per request, NaN as empty cells, lists of integers as
// JSON text cut at Excel's cell limit, files written 0644.
package workbook

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/xuri/excelize/v2"
)

// MaxRows is the number of data rows an Excel sheet can hold.
const MaxRows = 1<<20 - 1

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

// NewSummary returns a new workbook and a stream writer on its first
// sheet, named "Summary".
func NewSummary() (*excelize.File, *excelize.StreamWriter, error) {
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

// SetRow writes vals on 0-based row r; NaN and infinities become empty
// cells, lists of integers text (listCell).
func SetRow(sw *excelize.StreamWriter, r int, vals []any) error {
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

// SaveWithRawData adds the sheet "Raw data" (a header of columns, then
// rows, NaN and infinities as empty cells) to f and saves it as path.
func SaveWithRawData(f *excelize.File, path string, columns []string, rows [][]any) error {
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
		if err := SetRow(rw, i+1, r); err != nil {
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
