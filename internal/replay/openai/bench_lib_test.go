package openai

import (
	stdjson "encoding/json"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	"github.com/mtkit/mtkit/internal/cputime"
)

// benchChunk is a chunk as vLLM and the simulator stream it.
var benchChunk = []byte(`{"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mtkit-sim","choices":[{"index":0,"delta":{"content":" fox"},"logprobs":null,"finish_reason":null}],"sim_sent_ns":1700000000000000000}`)

// chunkLibs decode one chunk into its content and finish reason.
var chunkLibs = []struct {
	name   string
	decode func(b []byte) (content, finish string, err error)
}{
	{"hand-written", func(b []byte) (string, string, error) {
		var buf [4]fastChoice
		cs, _, ok := parseFastChunk(b, buf[:0])
		if !ok || len(cs) != 1 {
			return "", "", ErrStream
		}
		return string(cs[0].content), string(cs[0].finish), nil
	}},
	{"goccy", libDecode(goccy.Unmarshal)},
	{"std-v1", libDecode(stdjson.Unmarshal)},
	{"json-v2", libDecode(func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) })},
}

func libDecode(unmarshal func([]byte, any) error) func(b []byte) (string, string, error) {
	return func(b []byte) (string, string, error) {
		var c chunk // the struct applyJSON decodes
		if err := unmarshal(b, &c); err != nil {
			return "", "", err
		}
		if len(c.Choices) != 1 {
			return "", "", ErrStream
		}
		finish := ""
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
		return c.Choices[0].Delta.Content, finish, nil
	}
}

// BenchmarkChunkJSON compares decoding one streamed chunk with the
// hand-written parser (parseFastChunk, the client's hot path) and with
// JSON libraries; "apply" is the whole fold of a chunk into a response:
//
//	go test -run '^$' -bench ChunkJSON -benchmem ./internal/replay/openai/
func BenchmarkChunkJSON(b *testing.B) {
	for _, lib := range chunkLibs {
		b.Run(lib.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				if _, _, err := lib.decode(benchChunk); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		now := time.Now()
		var resp Response
		cpu := cputime.Process()
		for i := 0; b.Loop(); i++ {
			if i%1000 == 0 {
				resp = Response{}
			}
			if err := resp.Apply(benchChunk, now, true); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

// TestChunkLibsAgree checks that the benchmarked decoders read the same
// content and finish reason from the chunks of a simulated stream.
func TestChunkLibsAgree(t *testing.T) {
	t.Parallel()
	chunks := [][]byte{benchChunk,
		[]byte(`{"id":"x","choices":[{"index":0,"delta":{"content":" é\"\n"},"logprobs":null,"finish_reason":"length"}]}`)}
	for _, c := range chunks {
		wantC, wantF, err := chunkLibs[1].decode(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range chunkLibs {
			gotC, gotF, err := lib.decode(c)
			if lib.name == "hand-written" && err != nil {
				continue // escapes go to encoding/json, by design
			}
			if err != nil || gotC != wantC || gotF != wantF {
				t.Errorf("%s: %q %q %v, want %q %q", lib.name, gotC, gotF, err, wantC, wantF)
			}
		}
	}
}
