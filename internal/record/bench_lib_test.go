package record

import (
	"bytes"
	stdjson "encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	"github.com/mtkit/mtkit/internal/cputime"
)

// jsonLib is one JSON library under comparison: marshal a record to one
// line, unmarshal a line into a zero record.
type jsonLib struct {
	name      string
	marshal   func(r *Record) ([]byte, error)
	unmarshal func(b []byte, r *Record) error
}

// jsonLibs are the codecs BenchmarkRecordJSON compares side by side:
// "record" is the codec in use (JSONEncoder and the decoder's
// unmarshalRecord: goccy/go-json, plus error location); encoding/json/v2
// under GOEXPERIMENT=jsonv2 is the same code as go-json-experiment/json.
// The hand-written codec they replaced (still in the commit that added
// this benchmark) measured, on the shared 2-core machine (medians of 8, CPU
// time per record): encode 2.6 µs, decode 12.2 µs, against goccy's 3.0
// and 12.9 µs through JSONEncoder and unmarshalRecord; in a quieter
// run, wall time: decode 7.5 µs hand-written, 5.8 µs goccy.
var jsonLibs = []jsonLib{
	{"record", func(r *Record) ([]byte, error) {
		recBuf.Reset() // as mtrun uses it: one encoder, its buffer reused
		err := recEnc.Encode(r)
		return recBuf.Bytes(), err
	}, func(b []byte, r *Record) error { return unmarshalRecord(b, r, nil) }},
	{"goccy", func(r *Record) ([]byte, error) { return goccy.Marshal(r) }, func(b []byte, r *Record) error { return goccy.Unmarshal(b, r) }},
	{"std-v1", func(r *Record) ([]byte, error) { return stdjson.Marshal(r) }, func(b []byte, r *Record) error { return stdjson.Unmarshal(b, r) }},
	{"json-v2", func(r *Record) ([]byte, error) { return jsonv2.Marshal(r) }, func(b []byte, r *Record) error { return jsonv2.Unmarshal(b, r) }},
}

// recBuf receives the lines of recEnc.
var (
	recBuf bytes.Buffer
	recEnc = NewJSONEncoder(&recBuf)
)

// BenchmarkRecordJSON measures encoding and decoding of one record (a
// streamed request with 100 ITL gaps, usage and timings, as benchRecord)
// per JSON library, so the record codec can be chosen on numbers:
//
//	go test -run '^$' -bench RecordJSON -benchmem ./internal/record/
func BenchmarkRecordJSON(b *testing.B) {
	recs := make([]*Record, 256)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	line, err := jsonLibs[0].marshal(recs[0])
	if err != nil {
		b.Fatal(err)
	}
	line = bytes.Clone(line)
	for _, lib := range jsonLibs {
		b.Run("encode/"+lib.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			i := 0
			for b.Loop() {
				if _, err := lib.marshal(recs[i%len(recs)]); err != nil {
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
				var r Record
				if err := lib.unmarshal(line, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestJSONLibsAgree checks that every benchmarked library reads back the
// records the others write, so the benchmark compares equal work.
func TestJSONLibsAgree(t *testing.T) {
	t.Parallel()
	recs := genRecords(11, 50)
	for _, enc := range jsonLibs {
		for _, dec := range jsonLibs {
			got := make([]Record, len(recs))
			for i := range recs {
				b, err := enc.marshal(&recs[i])
				if err != nil {
					t.Fatalf("%s: %v", enc.name, err)
				}
				if err := dec.unmarshal(b, &got[i]); err != nil {
					t.Fatalf("%s → %s: %v", enc.name, dec.name, err)
				}
			}
			if d := diffRecords(recs, got); d != "" {
				t.Errorf("%s → %s: %s", enc.name, dec.name, d)
			}
		}
	}
}
