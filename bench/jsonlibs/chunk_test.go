package jsonlibs

import (
	stdjson "encoding/json"
	"errors"
	"testing"

	"github.com/bytedance/sonic"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mtkit/mtkit/internal/cputime"
)

// benchChunk is a chunk as vLLM and the simulator stream it (the input
// of internal/replay/openai's BenchmarkChunkJSON).
var benchChunk = []byte(`{"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mtkit-sim","choices":[{"index":0,"delta":{"content":" fox"},"logprobs":null,"finish_reason":null}],"sim_sent_ns":1700000000000000000}`)

// chunk is the part of a streamed chunk the client reads.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// chunkLibs decode one chunk into its content and finish reason.
var chunkLibs = []struct {
	name   string
	decode func(b []byte) (content, finish string, err error)
}{
	{"std-v1", chunkDecode(stdjson.Unmarshal)},
	{"sonic", chunkDecode(sonic.Unmarshal)},
	{"segmentio", chunkDecode(segjson.Unmarshal)},
}

func chunkDecode(unmarshal func([]byte, any) error) func(b []byte) (string, string, error) {
	return func(b []byte) (string, string, error) {
		var c chunk
		if err := unmarshal(b, &c); err != nil {
			return "", "", err
		}
		if len(c.Choices) != 1 {
			return "", "", errors.New("not one choice")
		}
		finish := ""
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
		return c.Choices[0].Delta.Content, finish, nil
	}
}

// BenchmarkChunkJSON decodes one streamed chunk per library (the
// hand-written parser and the libraries mtkit uses are in
// internal/replay/openai's BenchmarkChunkJSON).
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
}

// TestChunkLibsAgree checks that the libraries read the same content
// and finish reason as encoding/json.
func TestChunkLibsAgree(t *testing.T) {
	t.Parallel()
	for _, c := range [][]byte{benchChunk,
		[]byte(`{"id":"x","choices":[{"index":0,"delta":{"content":" é\"\n"},"logprobs":null,"finish_reason":"length"}]}`)} {
		wantC, wantF, err := chunkLibs[0].decode(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range chunkLibs[1:] {
			if gotC, gotF, err := lib.decode(c); err != nil || gotC != wantC || gotF != wantF {
				t.Errorf("%s: %q %q %v, want %q %q", lib.name, gotC, gotF, err, wantC, wantF)
			}
		}
	}
}
