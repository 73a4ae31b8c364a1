package record_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/mtkit/mtkit/internal/deepeq"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/record/recordtest"
)

// These tests hold for any field added to record.Record: the records come
// from recordtest, which fills every field by reflection, and the
// comparisons cover every field. A codec that drops, renames or retypes a
// field fails them (TestRoundTripNoticesDroppedField shows it).

// diff compares records as cmp.Diff with EquateEmpty does, after a fast
// check (internal/deepeq).
func diff(want, got []record.Record) string {
	if equal(want, got) {
		return ""
	}
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

func equal(want, got []record.Record) bool { return deepeq.Equal(want, got) }

var (
	readAll  = record.DecodeAll
	writeAll = record.EncodeAll
)

func readFiles(t *testing.T, fs *record.Files) []record.Record {
	t.Helper()
	defer fs.Close()
	return readAll(t, fs)
}

func parquetBytes(t *testing.T, recs []record.Record) []byte {
	var buf bytes.Buffer
	writeAll(t, record.NewParquetEncoder(&buf), recs)
	return buf.Bytes()
}

// codecPaths are every way records are written and read back.
var codecPaths = []struct {
	name  string
	trip  func(t *testing.T, recs []record.Record) []record.Record
	check func(t *testing.T, recs []record.Record) // optional: what the path must exercise
}{
	{name: "jsonl", trip: func(t *testing.T, recs []record.Record) []record.Record {
		var buf bytes.Buffer
		writeAll(t, record.NewJSONEncoder(&buf), recs)
		return readAll(t, record.NewJSONDecoder(&buf, "x.jsonl"))
	}},
	{name: "jsonl file, parallel chunks", trip: func(t *testing.T, recs []record.Record) []record.Record {
		p := filepath.Join(t.TempDir(), "x.jsonl")
		enc, err := record.Create(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, enc, recs)
		return readFiles(t, record.NewChunkedFiles([]string{p}, 2048))
	}},
	{name: "jsonl.zst file", trip: func(t *testing.T, recs []record.Record) []record.Record {
		p := filepath.Join(t.TempDir(), "x.jsonl.zst")
		enc, err := record.Create(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, enc, recs)
		return readFiles(t, &record.Files{Paths: []string{p}})
	}},
	{name: "parquet, columnar reader", trip: func(t *testing.T, recs []record.Record) []record.Record {
		data := parquetBytes(t, recs)
		if !record.IsColumnar(data) {
			t.Fatal("ParquetEncoder's file does not take the columnar reader")
		}
		dec, err := record.NewParquetDecoder(bytes.NewReader(data), int64(len(data)), "x.parquet")
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		return readAll(t, dec)
	}},
	{name: "parquet, generic reader", trip: func(t *testing.T, recs []record.Record) []record.Record {
		dec, err := record.NewGenericParquetDecoder(parquetBytes(t, recs), "x.parquet")
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		return readAll(t, dec)
	}},
	{name: "parquet parts directory", trip: func(t *testing.T, recs []record.Record) []record.Record {
		p := filepath.Join(t.TempDir(), "x.parquet")
		enc, err := record.Create(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, enc, recs)
		return readFiles(t, &record.Files{Paths: []string{p}})
	}},
}

// TestRandomFillsEveryField checks the generator: with nilProb 0 every
// field of every record is non-zero, so a codec that drops one cannot
// give back an equal record.
func TestRandomFillsEveryField(t *testing.T) {
	t.Parallel()
	for i, r := range recordtest.Records(1, 50, 0) {
		v := reflect.ValueOf(r)
		for _, f := range record.Fields() {
			if v.Field(f.Index).IsZero() || f.Value(&r) == nil {
				t.Errorf("record %d: field %s is zero", i, f.Name)
			}
		}
	}
}

// TestEveryFieldRoundTrips writes random records through every codec path
// and reads them back equal: every field set, every optional field nil,
// and mixed.
func TestEveryFieldRoundTrips(t *testing.T) {
	t.Parallel()
	for _, p := range codecPaths {
		for _, nilProb := range []float64{0, 0.5, 1} {
			recs := recordtest.Records(2, 100, nilProb)
			got := p.trip(t, recs)
			if d := diff(recs, got); d != "" {
				t.Errorf("%s, nil probability %v: records differ (-wrote +read):\n%s", p.name, nilProb, d)
			}
		}
	}
}

// without returns a struct type with the fields of Record but the one at
// index drop, and a function copying a Record into a value of it.
func without(drop int) (reflect.Type, func(r *record.Record) any) {
	rt := reflect.TypeFor[record.Record]()
	var fields []reflect.StructField
	var from []int
	for i := range rt.NumField() {
		if i != drop {
			fields = append(fields, rt.Field(i))
			from = append(from, i)
		}
	}
	twin := reflect.StructOf(fields)
	return twin, func(r *record.Record) any {
		src := reflect.ValueOf(r).Elem()
		dst := reflect.New(twin).Elem()
		for j, i := range from {
			dst.Field(j).Set(src.Field(i))
		}
		return dst.Addr().Interface()
	}
}

// TestRoundTripNoticesDroppedField shows that the round-trip comparison
// fails for a writer that leaves out any one field: JSON lines and a
// Parquet file written from a copy of Record without the field read back
// as different records.
func TestRoundTripNoticesDroppedField(t *testing.T) {
	t.Parallel()
	recs := recordtest.Records(3, 5, 0)
	for _, f := range record.Fields() {
		twin, conv := without(f.Index)
		// JSON.
		var lines bytes.Buffer
		for i := range recs {
			b, err := json.Marshal(conv(&recs[i]))
			if err != nil {
				t.Fatal(err)
			}
			lines.Write(append(b, '\n'))
		}
		dec := record.NewJSONDecoder(&lines, "x.jsonl")
		var got []record.Record
		for dec.Scan() {
			got = append(got, *dec.Record()) // a dropped run_id or start fails validation: also noticed
		}
		if equal(recs, got) {
			t.Errorf("json without %s: round trip not noticed", f.Name)
		}
		// Parquet.
		var buf bytes.Buffer
		w := parquet.NewWriter(&buf, parquet.SchemaOf(reflect.New(twin).Interface()), parquet.PageBufferSize(4096), parquet.WriteBufferSize(4096))
		for i := range recs {
			if err := w.Write(conv(&recs[i])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		pd, err := record.NewParquetDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "x.parquet")
		if err != nil {
			continue // no run_id or start column: refused, also noticed
		}
		got = got[:0]
		for pd.Scan() {
			got = append(got, *pd.Record())
		}
		pd.Close()
		if equal(recs, got) {
			t.Errorf("parquet without %s: round trip not noticed", f.Name)
		}
	}
}
