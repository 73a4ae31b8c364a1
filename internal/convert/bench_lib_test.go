package convert

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	goccy "github.com/goccy/go-json"
	goccyjsontext "github.com/goccy/go-json/jsontext"
	goccyv2 "github.com/goccy/go-json/v2"
	"github.com/mtkit/mtkit/internal/convert/sharegpttest"
	"github.com/mtkit/mtkit/internal/cputime"
)

// libShareGPT is a ShareGPT record as a JSON library decodes it: the id
// (a string or a number) and the messages, the fields the converter's
// scanner-based decoder reads.
type libShareGPT struct {
	ID            stdjson.RawMessage `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// scanLibs decode one ShareGPT record into its message texts.
var scanLibs = []struct {
	name   string
	decode func(b []byte) ([]string, error)
}{
	{"hand-written", func(b []byte) ([]string, error) {
		// The decoder keeps its scratch buffer between records, as each
		// of Run's decode workers does.
		d := benchDecoders.Get().(*decoder)
		defer benchDecoders.Put(d)
		d.format = SchemaAuto
		var rec record
		if err := d.decode(b, &rec); err != nil {
			return nil, err
		}
		texts := make([]string, len(rec.msgs))
		for i, m := range rec.msgs {
			texts[i] = m.Content
		}
		return texts, nil
	}},
	{"goccy", libTexts(goccy.Unmarshal)},
	{"std-v1", libTexts(stdjson.Unmarshal)},
	{"json-v2", libTexts(func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) })},
	{"jsontext", jsontextTexts},
	{"goccy-v2", libTexts(goccyV2Unmarshal)},
	{"goccy-v2-presence", func(b []byte) ([]string, error) {
		var r struct {
			ID            stdjson.RawMessage `json:"id"`
			Conversations []struct {
				From  optString `json:"from"`
				Value optString `json:"value"`
			} `json:"conversations"`
		}
		if err := goccyV2Unmarshal(b, &r); err != nil {
			return nil, err
		}
		texts := make([]string, len(r.Conversations))
		for i, m := range r.Conversations {
			texts[i] = m.Value.s
		}
		return texts, nil
	}},
}

// jsontextPool holds the token decoders of jsontextTexts, reused across
// records as a decode worker would.
var jsontextPool = sync.Pool{New: func() any { return new(jsontextDec) }}

type jsontextDec struct {
	r bytes.Reader
	d jsontext.Decoder
}

// jsontextTexts decodes a ShareGPT record with the token API of
// go-json-experiment (the future encoding/json/v2), set to accept what
// encoding/json v1 accepts (invalid UTF-8, duplicate names). A token
// decoder sees which keys are present and the kind of each value, which a
// struct decode cannot tell apart (null from missing), so this is the
// library route that could keep the converter's exact rules.
func jsontextTexts(b []byte) ([]string, error) {
	j := jsontextPool.Get().(*jsontextDec)
	defer jsontextPool.Put(j)
	j.r.Reset(b)
	j.d.Reset(&j.r, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	d := &j.d
	if _, err := d.ReadToken(); err != nil { // {
		return nil, err
	}
	var texts []string
	for d.PeekKind() != '}' {
		k, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		if k.String() != "conversations" {
			if err := d.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil { // [
			return nil, err
		}
		for d.PeekKind() != ']' {
			if _, err := d.ReadToken(); err != nil { // {
				return nil, err
			}
			var value string
			for d.PeekKind() != '}' {
				k, err := d.ReadToken()
				if err != nil {
					return nil, err
				}
				switch name := k.String(); name {
				case "from", "value":
					t, err := d.ReadToken()
					if err != nil {
						return nil, err
					}
					if name == "value" {
						value = t.String()
					}
				default:
					if err := d.SkipValue(); err != nil {
						return nil, err
					}
				}
			}
			if _, err := d.ReadToken(); err != nil { // }
				return nil, err
			}
			texts = append(texts, value)
		}
		if _, err := d.ReadToken(); err != nil { // ]
			return nil, err
		}
	}
	if _, err := d.ReadToken(); err != nil { // }
		return nil, err
	}
	return texts, nil
}

// goccyV2Unmarshal decodes by goccy's encoding/json/v2 API: exact key
// names, set to accept what v1 accepts (invalid UTF-8 replaced, duplicate
// names).
func goccyV2Unmarshal(b []byte, v any) error {
	return goccyv2.Unmarshal(b, v, goccyjsontext.AllowInvalidUTF8(true), goccyjsontext.AllowDuplicateNames(true))
}

// optString is a string member that records whether it was present and
// whether it was null, which the converter's rules need; it decodes by
// v2's streaming method, with no copy of the raw value.
type optString struct {
	s             string
	present, null bool
}

// UnmarshalJSONFrom reads a string or null.
func (o *optString) UnmarshalJSONFrom(d *goccyjsontext.Decoder) error {
	o.present = true
	t, err := d.ReadToken()
	if err != nil {
		return err
	}
	switch t.Kind() {
	case 'n':
		o.null = true
		return nil
	case '"':
		o.s = t.String()
		return nil
	}
	return fmt.Errorf("expected string, got JSON %s", t.Kind())
}

// benchDecoders are the hand-written decoders of the benchmark, reused.
var benchDecoders = sync.Pool{New: func() any { return new(decoder) }}

func libTexts(unmarshal func([]byte, any) error) func(b []byte) ([]string, error) {
	return func(b []byte) ([]string, error) {
		var r libShareGPT
		if err := unmarshal(b, &r); err != nil {
			return nil, err
		}
		texts := make([]string, len(r.Conversations))
		for i, m := range r.Conversations {
			texts[i] = m.Value
		}
		return texts, nil
	}
}

// benchRecords returns generated ShareGPT records, one per element.
func benchRecords(t testing.TB) [][]byte {
	var buf bytes.Buffer
	if _, err := sharegpttest.Write(&buf, 1<<20, 3, false); err != nil {
		t.Fatal(err)
	}
	return sharegpttest.Lines(buf.Bytes())
}

// benchInputs are the record sets BenchmarkScanJSON decodes: generated
// English records, long non-ASCII texts raw and escaped, and the real
// ShareGPT records of testdata (extra per-turn fields, Chinese/English
// mixes, empty values).
func benchInputs(t testing.TB) []struct {
	name string
	recs [][]byte
} {
	quirks, err := os.ReadFile(quirksFile)
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		recs [][]byte
	}{
		{"generated", benchRecords(t)},
		{"non-ascii", sharegpttest.NonASCII(false)},
		{"non-ascii-escaped", sharegpttest.NonASCII(true)},
		{"real-quirks", sharegpttest.Lines(quirks)},
	}
}

// BenchmarkScanJSON compares decoding one ShareGPT record with the
// converter's hand-written scanner and with JSON libraries (MB/s of input,
// CPU ns per record), on each of benchInputs:
//
//	go test -run '^$' -bench ScanJSON -benchmem ./internal/convert/
func BenchmarkScanJSON(b *testing.B) {
	for _, in := range benchInputs(b) {
		recs := in.recs
		size := 0
		for _, r := range recs {
			size += len(r)
		}
		for _, lib := range scanLibs {
			b.Run(in.name+"/"+lib.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size / len(recs)))
				cpu := cputime.Process()
				i := 0
				for b.Loop() {
					if _, err := lib.decode(recs[i%len(recs)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// TestScanLibsAgree checks that the benchmarked decoders read the same
// message texts, so the benchmark compares equal work.
func TestScanLibsAgree(t *testing.T) {
	t.Parallel()
	var recs [][]byte
	for _, in := range benchInputs(t) {
		recs = append(recs, in.recs[:min(50, len(in.recs))]...)
	}
	for _, r := range recs {
		want, err := scanLibs[0].decode(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range scanLibs[1:] {
			got, err := lib.decode(r)
			if err != nil || len(got) != len(want) {
				t.Fatalf("%s: %d texts, %v; want %d", lib.name, len(got), err, len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: text %d differs", lib.name, i)
				}
			}
		}
	}
}

// presenceMsg is a message as a struct decode sees it, with pointers so
// that a missing key leaves nil.
type presenceMsg struct {
	From    *string `json:"from"`
	Role    *string `json:"role"`
	Value   *string `json:"value"`
	Content *string `json:"content"`
}

// TestStructDecodeCannotKeepRules records why the converter does not
// decode records into structs with a JSON library (see docs/mtconvert.md,
// "Decoding"): a struct decode gives the same result for a key that is
// null and a key that is missing, and goccy matches keys
// case-insensitively, while the converter's rules tell them apart. Each
// input below is decoded identically by the libraries to its twin, but
// the converter gives a different record or an error.
func TestStructDecodeCannotKeepRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		lib       func([]byte, any) error
		in, twin  string
		convError bool // the converter rejects in
	}{
		{"from null", goccy.Unmarshal,
			`{"conversations":[{"from":null,"role":"user","value":"x"}]}`,
			`{"conversations":[{"role":"user","value":"x"}]}`, true},
		{"value null before content", goccyV2Unmarshal,
			`{"conversations":[{"from":"human","value":null,"content":"x"}]}`,
			`{"conversations":[{"from":"human","content":"x"}]}`, false},
		{"goccy v2 from null", goccyV2Unmarshal,
			`{"conversations":[{"from":null,"role":"user","value":"x"}]}`,
			`{"conversations":[{"role":"user","value":"x"}]}`, true},
		{"goccy case-insensitive key", goccy.Unmarshal,
			`{"conversations":[{"From":"human","value":"x"}]}`,
			`{"conversations":[{"from":"human","value":"x"}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var a, b struct {
				Conversations []presenceMsg `json:"conversations"`
			}
			if err := tc.lib([]byte(tc.in), &a); err != nil {
				t.Fatal(err)
			}
			if err := tc.lib([]byte(tc.twin), &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("library tells %s from %s; the struct route may be possible now", tc.in, tc.twin)
			}
			var d1, d2 decoder
			var r1, r2 record
			err1 := d1.decode([]byte(tc.in), &r1)
			err2 := d2.decode([]byte(tc.twin), &r2)
			if err2 != nil {
				t.Fatalf("twin: %v", err2)
			}
			if (err1 != nil) != tc.convError {
				t.Fatalf("converter error = %v, want error %v", err1, tc.convError)
			}
			if err1 == nil && reflect.DeepEqual(r1.msgs, r2.msgs) {
				t.Fatalf("converter reads %s and %s alike", tc.in, tc.twin)
			}
		})
	}
}
