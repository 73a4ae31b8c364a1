package jsonlibs

import (
	"bytes"
	"testing"

	"github.com/bytedance/sonic"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mtkit/mtkit/internal/cputime"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/record/recordtest"
)

// recordLibs encode a record to one JSON line and decode one line; the
// first is mtkit's codec (record.NewJSONEncoder, NewJSONDecoder).
var recordLibs = []struct {
	name      string
	marshal   func(r *record.Record) ([]byte, error)
	unmarshal func(b []byte, r *record.Record) error
}{
	{"record", func(r *record.Record) ([]byte, error) {
		var buf bytes.Buffer
		err := record.NewJSONEncoder(&buf).Encode(r)
		return buf.Bytes(), err
	}, func(b []byte, r *record.Record) error {
		d := record.NewJSONDecoder(bytes.NewReader(b), "line")
		if !d.Scan() {
			return d.Err()
		}
		*r = *d.Record()
		return d.Err()
	}},
	{"sonic", func(r *record.Record) ([]byte, error) { return sonic.Marshal(r) }, func(b []byte, r *record.Record) error { return sonic.Unmarshal(b, r) }},
	{"segmentio", func(r *record.Record) ([]byte, error) { return segjson.Marshal(r) }, func(b []byte, r *record.Record) error { return segjson.Unmarshal(b, r) }},
}

// BenchmarkRecordJSON encodes and decodes records with every field set
// (recordtest.Records) per library; internal/record's benchmark of the
// same name measures mtkit's codec on its own inputs without the
// decoder's set-up per line that this one pays.
func BenchmarkRecordJSON(b *testing.B) {
	recs := recordtest.Records(1, 256, 0)
	line, err := recordLibs[0].marshal(&recs[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, lib := range recordLibs {
		b.Run("encode/"+lib.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			i := 0
			for b.Loop() {
				if _, err := lib.marshal(&recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run("decode/"+lib.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			cpu := cputime.Process()
			for b.Loop() {
				var r record.Record
				if err := lib.unmarshal(line, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestRecordLibsAgree checks that every library reads back the records
// the others write, so the benchmark compares equal work.
func TestRecordLibsAgree(t *testing.T) {
	t.Parallel()
	recs := recordtest.Records(11, 50, 0.3)
	for _, enc := range recordLibs {
		for _, dec := range recordLibs {
			got := make([]record.Record, len(recs))
			for i := range recs {
				b, err := enc.marshal(&recs[i])
				if err != nil {
					t.Fatalf("%s: %v", enc.name, err)
				}
				if err := dec.unmarshal(b, &got[i]); err != nil {
					t.Fatalf("%s → %s: %v", enc.name, dec.name, err)
				}
			}
			if d := cmp.Diff(recs, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s → %s: %s", enc.name, dec.name, d)
			}
		}
	}
}
