package record

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// project returns r with the fields not in cols zeroed: what a reader of
// cols must return.
func project(r Record, cols *Columns) Record {
	v := reflect.ValueOf(&r).Elem()
	for _, f := range Fields() {
		if !cols.Has(f.Name) {
			fv := v.Field(f.Index)
			fv.Set(reflect.Zero(fv.Type()))
		}
	}
	return r
}

// projectAll returns recs projected on cols (recs itself when cols is
// nil: every field is read).
func projectAll(recs []Record, cols *Columns) []Record {
	if cols == nil {
		return recs
	}
	out := make([]Record, len(recs))
	for i := range recs {
		out[i] = project(recs[i], cols)
	}
	return out
}

// readFiles reads every record of fs; a problem fails the test.
func readFiles(t *testing.T, fs *Files) []Record {
	t.Helper()
	defer fs.Close()
	var got []Record
	for fs.Scan() {
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		got = append(got, *fs.Record())
	}
	return got
}

// TestColumns: every decoder (Parquet columnar, JSONL sequential and
// parallel) fills exactly the fields asked for, the others zero, and
// bad JSON in a skipped field's value is still found when the line is not
// valid JSON.
func TestColumns(t *testing.T) {
	t.Parallel()
	recs := genRecords(7, 1000)
	recs[3].Error, recs[4].ServerExtra, recs[5].ITLNs = "boom", `{"k":1}`, []int64{1, 2, 3}
	dir := t.TempDir()
	pq, js := filepath.Join(dir, "r.parquet"), filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(pq, encodeParquet(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(js, encodeJSONL(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		names []string
	}{
		{"identity only", nil},
		{"timings", []string{"ttft_ns", "tpot_ns", "latency_ns", "turn"}},
		{"itl and strings", []string{"itl_ns", "error", "model", "first_token", "verify_mismatch", "retried"}},
	} {
		cols, err := NewColumns(tc.names...)
		if err != nil {
			t.Fatal(err)
		}
		want := projectAll(recs, cols)
		for _, in := range []struct {
			path       string
			sequential bool
		}{{pq, false}, {js, false}, {js, true}} {
			got := readFiles(t, &Files{Paths: []string{in.path}, Columns: cols, sequential: in.sequential, chunkSize: 4096})
			if d := diffRecords(want, got); d != "" {
				t.Fatalf("%s, %s (sequential %v): %s", tc.name, filepath.Base(in.path), in.sequential, d)
			}
		}
	}
	if _, err := NewColumns("no_such_field"); err == nil {
		t.Error("NewColumns accepted an unknown field")
	}
}

// TestColumnsBadLine: a skipped field is not decoded, but a line that is
// not JSON, or a kept field of the wrong type, is still an error naming
// the field.
func TestColumnsBadLine(t *testing.T) {
	t.Parallel()
	cols, err := NewColumns("ttft_ns")
	if err != nil {
		t.Fatal(err)
	}
	base := `"run_id":"r","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:01Z"`
	for _, tc := range []struct {
		line, want string
	}{
		{`{` + base + `,"itl_ns":[1,2,3],"ttft_ns":5}`, ""},
		{`{` + base + `,"itl_ns":"skipped, not checked","ttft_ns":5}`, ""},
		{`{` + base + `,"ttft_ns":"x"}`, "ttft_ns: expected int64, got JSON string"},
		{`{` + base + `,"itl_ns":[1,2`, "invalid JSON"},
	} {
		var r Record
		err := unmarshalRecord([]byte(tc.line), &r, cols)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.line, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.line, err, tc.want)
		case err == nil && (r.ITLNs != nil || r.TTFTNs == nil || *r.TTFTNs != 5):
			t.Errorf("%s: %+v", tc.line, r)
		}
	}
}

// TestParquetBufferReuse: a row group decoded into the buffer of an
// earlier one shows none of its optional values or lists where it has
// none, with every column and with a selection.
func TestParquetBufferReuse(t *testing.T) {
	t.Parallel()
	recs := genRecords(11, 700)
	for i := range recs {
		if (i/100)%2 == 0 {
			continue // rows of even row groups keep their values
		}
		v := reflect.ValueOf(&recs[i]).Elem()
		for j := range v.NumField() {
			sf := v.Type().Field(j)
			if strings.Contains(sf.Tag.Get("parquet"), ",optional") || sf.Type.Kind() == reflect.Slice {
				v.Field(j).Set(reflect.Zero(sf.Type))
			}
		}
	}
	data := encodeParquetGroups(t, recs, 100)
	path := filepath.Join(t.TempDir(), "r.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sel, err := NewColumns("ttft_ns", "itl_ns", "error", "first_token", "verify_mismatch")
	if err != nil {
		t.Fatal(err)
	}
	for _, cols := range []*Columns{nil, sel} {
		got := readFiles(t, &Files{Paths: []string{path}, Columns: cols})
		if d := diffRecords(projectAll(recs, cols), got); d != "" {
			t.Fatalf("columns %v: %s", cols != nil, d)
		}
	}
}
