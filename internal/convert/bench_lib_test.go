package convert

import (
	"bytes"
	stdjson "encoding/json"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"
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
		d.format = FormatAuto
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
	{"sonic", libTexts(sonic.Unmarshal)},
	{"segmentio", libTexts(segjson.Unmarshal)},
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
	if _, err := genShareGPT(&buf, 1<<20, 3, false); err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for line := range bytes.Lines(buf.Bytes()) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			recs = append(recs, line)
		}
	}
	return recs
}

// BenchmarkScanJSON compares decoding one ShareGPT record (2–10 turns,
// about 4 KB) with the converter's hand-written scanner and with JSON
// libraries (MB/s of input):
//
//	go test -run '^$' -bench ScanJSON -benchmem ./internal/convert/
func BenchmarkScanJSON(b *testing.B) {
	recs := benchRecords(b)
	size := 0
	for _, r := range recs {
		size += len(r)
	}
	for _, lib := range scanLibs {
		b.Run(lib.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size / len(recs)))
			cpu := cpuTime()
			i := 0
			for b.Loop() {
				if _, err := lib.decode(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestScanLibsAgree checks that the benchmarked decoders read the same
// message texts, so the benchmark compares equal work.
func TestScanLibsAgree(t *testing.T) {
	t.Parallel()
	recs := benchRecords(t)[:50]
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

// cpuTime is the process's user+system CPU time: on a loaded, shared
// machine CPU time per operation is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
