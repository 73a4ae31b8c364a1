package record

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// decodeGeneric reads a Parquet file with the generic decoder, even when
// the columnar one could read it.
func decodeGeneric(t *testing.T, data []byte) []Record {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGenericReader(f, "g.parquet")
	if err != nil {
		t.Fatal(err)
	}
	d := &ParquetDecoder{name: "g.parquet", g: g, buf: make([]Record, 100), total: f.NumRows()}
	defer d.Close()
	return decodeAll(t, d)
}

// TestParquetGenericSameAsColumnar checks every field type through the
// generic decoder on ParquetEncoder's own output (optional values, lists
// spanning pages, bools, floats, times).
func TestParquetGenericSameAsColumnar(t *testing.T) {
	t.Parallel()
	recs := genRecords(43, 1500)
	recs[3].Error, recs[4].ServerExtra, recs[5].VerifyMismatch = "boom ☃", `{"k":1}`, Ptr(true)
	recs[6].ITLNs = make([]int64, 20000)
	for i := range recs[6].ITLNs {
		recs[6].ITLNs[i] = int64(i)
	}
	got := decodeGeneric(t, encodeParquet(t, recs))
	if d := diffRecords(recs, got); d != "" {
		t.Fatal(d)
	}
}

// TestParquetDictionaryInts reads a file with exactly ParquetEncoder's
// schema whose integer columns are dictionary-encoded, as pyarrow writes
// them: the columnar decoder cannot read such pages and must hand over to
// the generic one (before, it stopped with an error and 0 rows).
func TestParquetDictionaryInts(t *testing.T) {
	t.Parallel()
	recs := genRecords(45, 700)
	typ := reflect.TypeFor[Record]()
	var fields []reflect.StructField
	for i := range typ.NumField() {
		f := typ.Field(i)
		if k := f.Type.Kind(); k == reflect.Int || k == reflect.Int64 {
			name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
			f.Tag = reflect.StructTag(strings.Replace(string(f.Tag), `parquet:"`+name, `parquet:"`+name+",dict", 1))
		}
		fields = append(fields, f)
	}
	twin := reflect.StructOf(fields)
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.SchemaOf(reflect.New(twin).Interface()), parquet.MaxRowsPerRowGroup(300))
	for i := range recs {
		if err := w.Write(reflect.ValueOf(recs[i]).Convert(twin).Interface()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !columnarOK(f) || !dictionaryInts(t, data) {
		t.Fatalf("the file does not have ParquetEncoder's schema with dictionary-encoded integers (columnar %v)", columnarOK(f))
	}
	if d := diffRecords(recs, decodeParquet(t, data)); d != "" {
		t.Fatal(d)
	}
}
