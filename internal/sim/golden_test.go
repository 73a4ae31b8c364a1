package sim

import (
	"io"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// volatile matches the fields that change from run to run.
var volatile = regexp.MustCompile(`("created":|"sim_sent_ns":)\d+`)

// TestSSEGolden pins the exact wire format of streams and non-streaming
// bodies for a fixed seed.
func TestSSEGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		path string
		body map[string]any
	}{
		{"chat_stream", Config{Seed: 1}, "/v1/chat/completions",
			with(chatBody(true, 4, "Hello"), "stream_options", map[string]any{"include_usage": true})},
		{"chat_stream_continuous_n2_reasoning", Config{Seed: 1, ReasoningTokens: 2}, "/v1/chat/completions",
			with(with(chatBody(true, 3, "Hello"), "n", 2), "stream_options", map[string]any{"include_usage": true, "continuous_usage_stats": true})},
		{"completions_stream", Config{Seed: 1}, "/v1/completions",
			map[string]any{"prompt": "Once", "max_tokens": 3, "stream": true, "stream_options": map[string]any{"include_usage": true}}},
		{"chat", Config{Seed: 1, ReasoningTokens: 1}, "/v1/chat/completions", chatBody(false, 3, "Hello")},
		{"completions", Config{Seed: 1}, "/v1/completions", map[string]any{"prompt": "Once", "max_tokens": 3}},
		{"error_unknown_model", Config{Seed: 1}, "/v1/chat/completions", with(chatBody(false, 3, "Hello"), "model", "nope")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ts := newTestServer(t, tt.cfg)
			resp := post(t, ts.URL+tt.path, tt.body)
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			got := volatile.ReplaceAll(b, []byte("${1}0"))
			clitest.Golden(t, filepath.Join("testdata", tt.name+".golden"), got)
		})
	}
}
