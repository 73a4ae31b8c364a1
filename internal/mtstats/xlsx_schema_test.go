package mtstats

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/record/recordtest"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats/statstest"
	"github.com/mtkit/mtkit/internal/workbook"
	"github.com/xuri/excelize/v2"
)

// TestRecordsPathKeepsEveryField passes random records, every field set
// by reflection (recordtest), through mtstats' record path (--records
// and --to) from JSONL and Parquet inputs, and reads them back equal.
func TestRecordsPathKeepsEveryField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, nilProb := range []float64{0, 0.5} {
		recs := recordtest.Records(7, 60, nilProb)
		for _, in := range []struct {
			name string
			data []byte
		}{{"in.jsonl", statstest.JSONL(t, recs)}, {"in.parquet", statstest.Parquet(t, recs)}} {
			path := filepath.Join(dir, in.name)
			writeTestFile(t, path, in.data)
			var out bytes.Buffer
			o := Options{Inputs: []string{path}, Out: &out, Err: io.Discard, IncludeWarmup: true, Records: true}
			if err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(dir, "to.parquet")
			o.Records, o.To = false, to
			if err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			for name, fs := range map[string]*record.Files{
				"--records": {Paths: []string{"-"}, Stdin: &out},
				"--to":      {Paths: []string{to}},
			} {
				var got []record.Record
				for fs.Scan() {
					if err := fs.Err(); err != nil {
						t.Fatal(err)
					}
					got = append(got, *fs.Record())
				}
				fs.Close()
				if d := cmp.Diff(recs, got, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s from %s, nil probability %v (-in +out):\n%s", name, in.name, nilProb, d)
				}
			}
		}
	}
}

// TestRawDataEveryField checks that the "Raw data" sheet of --xlsx has a
// column for every record field, in the record's names, and that each
// cell holds the record's value.
func TestRawDataEveryField(t *testing.T) {
	t.Parallel()
	recs := recordtest.Records(8, 40, 0.3)
	path := filepath.Join(t.TempDir(), "in.jsonl")
	writeTestFile(t, path, statstest.JSONL(t, recs))
	xlsx := filepath.Join(t.TempDir(), "r.xlsx")
	o := Options{Inputs: []string{path}, Out: io.Discard, Err: io.Discard, IncludeWarmup: true, Format: report.FormatJSON, XLSX: xlsx}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Raw data", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	fields := record.Fields()
	var names []string
	for _, fl := range fields {
		names = append(names, fl.Name)
	}
	if len(rows) != len(recs)+1 || !slices.Equal(rows[0], names) {
		t.Fatalf("%d rows, header %q; want %d + header %q", len(rows), rows[0], len(recs), names)
	}
	bySeq := map[string]*record.Record{}
	for i := range recs {
		bySeq[strconv.FormatInt(recs[i].Seq, 10)] = &recs[i]
	}
	seqCol := slices.Index(names, "seq")
	for _, row := range rows[1:] {
		r := bySeq[row[seqCol]]
		if r == nil {
			t.Fatalf("row with unknown seq %q", row[seqCol])
		}
		for j, fl := range fields {
			got := ""
			if j < len(row) {
				got = row[j]
			}
			want := cellText(fl.Value(r))
			if x, ok := fl.Value(r).(float64); ok { // Excel keeps 15 significant digits
				if g, err := strconv.ParseFloat(got, 64); err == nil && math.Abs(g-x) <= 1e-14*math.Abs(x) {
					got = want
				}
			}
			if got != want {
				t.Errorf("seq %d, %s: cell %q, want %q", r.Seq, fl.Name, got, want)
			}
		}
	}
}

// cellText is the raw text a value of record.Field.Value has in a cell.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string: // XML 1.0, hence Excel, has no control characters but \t \n \r
		return strings.Map(func(c rune) rune {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return '\ufffd'
			}
			return c
		}, x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []int64:
		return workbook.ListCell(x)
	}
	panic("no cell text for a field value")
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
