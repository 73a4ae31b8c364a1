package record

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mtkit/mtkit/internal/duckdbtest"
)

// duckdb runs sql in DuckDB (see duckdbtest.Query).
func duckdb(t *testing.T, sql string) []map[string]any {
	t.Helper()
	return duckdbtest.Query(t, sql)
}

// intColumns are the Record columns of Go type int (INT64 in
// ParquetEncoder's files).
var intColumns = []string{"shard", "turn", "attempt", "choice", "client", "input_messages", "dropped_messages",
	"max_tokens", "min_tokens", "chunks", "reasoning_chunks", "status"}

// TestParquetFromDuckDB reads record files that DuckDB wrote from one of
// ParquetEncoder's: dictionary-encoded integers and strings, every column
// optional, INT32 integers, columns in another order, extra columns,
// missing optional columns, microsecond timestamps.
func TestParquetFromDuckDB(t *testing.T) {
	t.Parallel()
	recs := genRecords(44, 400)
	recs[3].Error, recs[4].ServerExtra, recs[5].VerifyMismatch = "boom ☃", `{"k":1}`, Ptr(true)
	recs[7].CachedTokens, recs[8].ITLNs = nil, nil
	for i := range recs {
		// DuckDB reads a time zone–aware timestamp as microseconds.
		truncateTimes(&recs[i], time.Microsecond)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.parquet")
	if err := os.WriteFile(src, encodeParquet(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := parquet.SchemaOf(Record{}).Columns()
	var names []string
	for _, c := range cols {
		if len(names) == 0 || names[len(names)-1] != c[0] {
			names = append(names, c[0])
		}
	}
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	var int32Reversed []string
	for _, n := range reversed {
		if slices.Contains(intColumns, n) {
			n = "CAST(" + n + " AS INTEGER) AS " + n
		}
		int32Reversed = append(int32Reversed, `"`+strings.TrimSuffix(strings.TrimPrefix(n, `"`), `"`)+`"`)
	}
	for i, n := range int32Reversed {
		if strings.Contains(n, "CAST(") {
			int32Reversed[i] = strings.Trim(n, `"`)
		}
	}
	dropped := []string{"first_token", "ttft_content_ns", "client_wait_ns", "reasoning_tokens", "verify_mismatch", "server_extra", "error", "itl_ns"}
	retype := func(typ string) string {
		return "SELECT * REPLACE (CAST(scheduled AS " + typ + ") AS scheduled, CAST(start AS " + typ + ") AS start, " +
			"CAST(first_token AS " + typ + ") AS first_token, CAST(\"end\" AS " + typ + ") AS \"end\") FROM '" + src + "'"
	}
	for _, tc := range []struct {
		name   string
		query  string
		expect func(r *Record)
	}{
		{"as-is", "SELECT * FROM '" + src + "'", nil},
		{"int32-reordered-extra", "SELECT 'x' AS extra_text, 2.5 AS extra_num, " + strings.Join(int32Reversed, ", ") + " FROM '" + src + "'", nil},
		{"missing-optional", "SELECT * EXCLUDE (" + strings.Join(dropped, ", ") + ") FROM '" + src + "'", func(r *Record) {
			r.FirstToken, r.TTFTContentNs, r.ClientWaitNs, r.ReasoningTokens, r.VerifyMismatch, r.ServerExtra, r.Error, r.ITLNs = nil, nil, nil, nil, nil, "", "", nil
		}},
		{"nanoseconds", retype("TIMESTAMP_NS"), nil},
		{"milliseconds", retype("TIMESTAMP_MS"), func(r *Record) { roundTimes(r, time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(dir, tc.name+".parquet")
			duckdb(t, "SET TimeZone = 'UTC'; COPY ("+tc.query+") TO '"+out+"' (FORMAT parquet, ROW_GROUP_SIZE 150)")
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "as-is" && !dictionaryInts(t, data) {
				t.Error("DuckDB wrote no dictionary-encoded integer column: the case of pyarrow's files is not covered")
			}
			want := slices.Clone(recs)
			for i := range want {
				if tc.expect != nil {
					tc.expect(&want[i])
				}
			}
			got := decodeParquet(t, data)
			if d := diffRecords(want, got); d != "" {
				t.Fatalf("records differ (-want +got):\n%s", d)
			}
		})
	}
}

// dictionaryInts reports whether some INT32/INT64 column chunk of the file
// is dictionary-encoded.
func dictionaryInts(t *testing.T, data []byte) bool {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Type != format.Int32 && c.MetaData.Type != format.Int64 {
				continue
			}
			for _, e := range c.MetaData.Encoding {
				//lint:ignore SA1019 older writers (pyarrow's default) still write PlainDictionary
				if e == format.RLEDictionary || e == format.PlainDictionary {
					return true
				}
			}
		}
	}
	return false
}

// truncateTimes truncates the timestamps of r to multiples of d.
func truncateTimes(r *Record, d time.Duration) {
	mapTimes(r, func(t time.Time) time.Time { return t.Truncate(d) })
}

// roundTimes rounds the timestamps of r to multiples of d, as DuckDB's
// casts do.
func roundTimes(r *Record, d time.Duration) {
	mapTimes(r, func(t time.Time) time.Time { return t.Round(d) })
}

// mapTimes replaces each timestamp t of r with f(t).
func mapTimes(r *Record, f func(time.Time) time.Time) {
	r.Scheduled, r.Start, r.End = f(r.Scheduled), f(r.Start), f(r.End)
	if r.FirstToken != nil {
		r.FirstToken = Ptr(f(*r.FirstToken))
	}
}

// TestParquetDuckDBFile reads the DuckDB-written file kept in testdata
// (see testdata/README.md) and compares it with the records it was made
// from; it needs no DuckDB.
func TestParquetDuckDBFile(t *testing.T) {
	t.Parallel()
	js, err := os.ReadFile("testdata/duckdb-records.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := decodeAll(t, NewJSONDecoder(bytes.NewReader(js), "duckdb-records.jsonl"))
	fs := &Files{Paths: []string{"testdata/duckdb-records.parquet"}}
	got := decodeAll(t, fs)
	if len(want) != 50 {
		t.Fatalf("%d records in the JSONL", len(want))
	}
	if d := diffRecords(want, got); d != "" {
		t.Fatal(d)
	}
}
