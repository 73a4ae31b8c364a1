package jsonlibs

import (
	"bytes"
	stdjson "encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/bytedance/sonic"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mtkit/mtkit/internal/convert/sharegpttest"
	"github.com/mtkit/mtkit/internal/cputime"
)

// shareGPT is a ShareGPT record as a JSON library decodes it: the id
// and the messages, the fields the converter's scanner reads.
type shareGPT struct {
	ID            stdjson.RawMessage `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// sonicStrict is sonic set as close to encoding/json as it goes: keys
// matched case-sensitively (the converter's keys are exact), control
// characters rejected, strings copied out of the input buffer.
var sonicStrict = sonic.Config{CaseSensitive: true, ValidateString: true, CopyString: true}.Froze()

// scanLibs decode one ShareGPT record into its message texts.
var scanLibs = []struct {
	name   string
	decode func(b []byte) ([]string, error)
}{
	{"std-v1", texts(stdjson.Unmarshal)},
	{"sonic", texts(sonic.Unmarshal)},
	{"sonic-strict", texts(sonicStrict.Unmarshal)},
	{"segmentio", texts(segjson.Unmarshal)},
}

func texts(unmarshal func([]byte, any) error) func(b []byte) ([]string, error) {
	return func(b []byte) ([]string, error) {
		var r shareGPT
		if err := unmarshal(b, &r); err != nil {
			return nil, err
		}
		out := make([]string, len(r.Conversations))
		for i, m := range r.Conversations {
			out[i] = m.Value
		}
		return out, nil
	}
}

// scanInputs are the record sets of internal/convert's
// BenchmarkScanJSON: generated English records, long non-ASCII texts raw
// and escaped, and the real ShareGPT records of its testdata.
func scanInputs(t testing.TB) []struct {
	name string
	recs [][]byte
} {
	var gen bytes.Buffer
	if _, err := sharegpttest.Write(&gen, 1<<20, 3, false); err != nil {
		t.Fatal(err)
	}
	quirks, err := os.ReadFile("../../internal/convert/testdata/sharegpt_quirks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		recs [][]byte
	}{
		{"generated", sharegpttest.Lines(gen.Bytes())},
		{"non-ascii", sharegpttest.NonASCII(false)},
		{"non-ascii-escaped", sharegpttest.NonASCII(true)},
		{"real-quirks", sharegpttest.Lines(quirks)},
	}
}

// BenchmarkScanJSON decodes one ShareGPT record per library (MB/s of
// input, CPU ns per record), on each of scanInputs.
func BenchmarkScanJSON(b *testing.B) {
	for _, in := range scanInputs(b) {
		size := 0
		for _, r := range in.recs {
			size += len(r)
		}
		for _, lib := range scanLibs {
			b.Run(in.name+"/"+lib.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size / len(in.recs)))
				cpu := cputime.Process()
				i := 0
				for b.Loop() {
					if _, err := lib.decode(in.recs[i%len(in.recs)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// TestScanLibsAgree checks that the libraries read the same message
// texts as encoding/json, so the benchmark compares equal work.
func TestScanLibsAgree(t *testing.T) {
	t.Parallel()
	for _, in := range scanInputs(t) {
		for _, r := range in.recs[:min(50, len(in.recs))] {
			want, err := scanLibs[0].decode(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, lib := range scanLibs[1:] {
				if got, err := lib.decode(r); err != nil || !slices.Equal(got, want) {
					t.Fatalf("%s, %s: %d texts, %v; want %d, the same", in.name, lib.name, len(got), err, len(want))
				}
			}
		}
	}
}

// TestSonicCannotTellNullFromMissing is sonic's part of internal/
// convert's TestStructDecodeCannotKeepRules: decoded into a struct, a
// key that is null and a key that is missing give the same result, which
// the converter's rules tell apart.
func TestSonicCannotTellNullFromMissing(t *testing.T) {
	t.Parallel()
	type msg struct {
		From    *string `json:"from"`
		Role    *string `json:"role"`
		Value   *string `json:"value"`
		Content *string `json:"content"`
	}
	for _, tc := range []struct{ in, twin string }{
		{`{"conversations":[{"from":null,"role":"user","value":"x"}]}`, `{"conversations":[{"role":"user","value":"x"}]}`},
		{`{"conversations":[{"from":"human","value":null,"content":"x"}]}`, `{"conversations":[{"from":"human","content":"x"}]}`},
	} {
		var a, b struct {
			Conversations []msg `json:"conversations"`
		}
		if err := sonicStrict.Unmarshal([]byte(tc.in), &a); err != nil {
			t.Fatal(err)
		}
		if err := sonicStrict.Unmarshal([]byte(tc.twin), &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("sonic tells %s from %s; the struct route may be possible now", tc.in, tc.twin)
		}
	}
}
