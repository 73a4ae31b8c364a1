package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// BenchmarkStreamZeroLatency measures end-to-end chunks per second of a
// zero-latency server over loopback HTTP, with a minimal client reading
// the lines (one token per chunk).
func BenchmarkStreamZeroLatency(b *testing.B) {
	for _, tc := range []struct {
		name string
		path string
		body map[string]any
	}{
		{"chat", "/v1/chat/completions", chatBody(true, 10000, "go")},
		{"chat_continuous_usage", "/v1/chat/completions", with(chatBody(true, 10000, "go"), "stream_options",
			map[string]any{"include_usage": true, "continuous_usage_stats": true})},
		{"completions", "/v1/completions", map[string]any{"prompt": "go", "max_tokens": 10000, "stream": true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			_, ts := newTestServer(b, Config{})
			body, _ := json.Marshal(tc.body)
			b.ReportAllocs()
			chunks := 0
			start := time.Now()
			for b.Loop() {
				resp, err := http.Post(ts.URL+tc.path, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				br := bufio.NewReaderSize(resp.Body, 64<<10)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						break
					}
					if len(line) > 6 {
						chunks++
					}
				}
				_ = resp.Body.Close()
			}
			b.ReportMetric(float64(chunks)/time.Since(start).Seconds(), "chunks/s")
		})
	}
}

// discardWriter is a ResponseWriter that drops the body, to measure the
// server's own cost per chunk.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// BenchmarkServeChunks measures the handler alone: chunks/s with no
// network, one request of 10000 tokens per iteration.
func BenchmarkServeChunks(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(chatBody(true, 10000, "go"))
	b.ReportAllocs()
	start := time.Now()
	n := 0
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		s.ServeHTTP(&discardWriter{h: http.Header{}}, req)
		n += 10000
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "chunks/s")
}
