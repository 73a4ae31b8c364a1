package record

import (
	"bytes"
	stdjson "encoding/json"
	"testing"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"
)

// jsonLib is one JSON library under comparison: marshal a record to one
// line, unmarshal a line into a zero record.
type jsonLib struct {
	name      string
	marshal   func(r *Record) ([]byte, error)
	unmarshal func(b []byte, r *Record) error
}

// jsonLibs are the codecs BenchmarkRecordJSON compares side by side (the
// record codec in use is "record"; see jsonl.go). encoding/json/v2 under
// GOEXPERIMENT=jsonv2 is the same code as go-json-experiment/json.
var jsonLibs = []jsonLib{
	{"record", func(r *Record) ([]byte, error) {
		var err error
		handBuf, err = appendRecord(handBuf[:0], r) // the encoder reuses its buffer
		return handBuf, err
	}, func(b []byte, r *Record) error { return unmarshalRecord(b, r, &handCache) }},
	{"goccy", func(r *Record) ([]byte, error) { return goccy.Marshal(r) }, func(b []byte, r *Record) error { return goccy.Unmarshal(b, r) }},
	{"goccy-stream", func(r *Record) ([]byte, error) {
		goccyBuf.Reset() // as JSONEncoder would use it: one encoder, one reused buffer
		err := goccyEnc.Encode(r)
		return goccyBuf.Bytes(), err
	}, func(b []byte, r *Record) error { return goccy.UnmarshalNoEscape(b, r) }},
	{"std-v1", func(r *Record) ([]byte, error) { return stdjson.Marshal(r) }, func(b []byte, r *Record) error { return stdjson.Unmarshal(b, r) }},
	{"json-v2", func(r *Record) ([]byte, error) { return jsonv2.Marshal(r) }, func(b []byte, r *Record) error { return jsonv2.Unmarshal(b, r) }},
	{"sonic", func(r *Record) ([]byte, error) { return sonic.Marshal(r) }, func(b []byte, r *Record) error { return sonic.Unmarshal(b, r) }},
	{"segmentio", func(r *Record) ([]byte, error) { return segjson.Marshal(r) }, func(b []byte, r *Record) error { return segjson.Unmarshal(b, r) }},
}

// handBuf and handCache are the hand-written codec's reused buffer and
// decode cache, as JSONEncoder and JSONDecoder keep them.
var (
	handBuf   []byte
	handCache decodeCache
	goccyBuf  bytes.Buffer
	goccyEnc  = goccy.NewEncoder(&goccyBuf)
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
	line, err := appendRecord(nil, recs[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, lib := range jsonLibs {
		b.Run("encode/"+lib.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := lib.marshal(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run("decode/"+lib.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				var r Record
				if err := lib.unmarshal(line, &r); err != nil {
					b.Fatal(err)
				}
			}
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
