package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// newTestServer starts s for cfg on an httptest server.
func newTestServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// post sends body as JSON to url and returns the response.
func post(t testing.TB, url string, body any) *http.Response {
	t.Helper()
	return postCtx(t, context.Background(), url, body)
}

func postCtx(t testing.TB, ctx context.Context, url string, body any) *http.Response {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// sseEvent is one data line of a stream with its receive time.
type sseEvent struct {
	data []byte
	at   time.Time
	obj  map[string]any // nil for [DONE] and malformed lines
	err  error          // JSON error of a malformed line
}

// readSSE reads the data lines of a stream until EOF, checking the
// framing ("data: ...\n\n"); it returns the events and the read error.
func readSSE(t testing.TB, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	br := bufio.NewReader(r)
	var evs []sseEvent
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) == 0 {
				return evs, nil
			}
			return evs, err
		}
		at := time.Now()
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		blank, err := br.ReadBytes('\n')
		if err != nil || string(blank) != "\n" {
			t.Fatalf("data line %q not followed by a blank line (%q, %v)", line, blank, err)
		}
		ev := sseEvent{data: bytes.TrimSuffix(data, []byte("\n")), at: at}
		if string(ev.data) != "[DONE]" {
			ev.err = json.Unmarshal(ev.data, &ev.obj)
		}
		evs = append(evs, ev)
	}
}

// streamResult sums up a stream per choice.
type streamResult struct {
	text      map[int]string
	reasoning map[int]string
	tokens    map[int]int // token-bearing chunks per choice
	finish    map[int]string
	usage     map[string]any // of the final usage chunk
	done      bool
	firstTok  time.Time
	tokTimes  []time.Time // receive times of the token chunks
	tokSent   []int64     // their sim_sent_ns
	sentNS    []int64     // sim_sent_ns of every chunk
}

func summarize(t testing.TB, evs []sseEvent) streamResult {
	t.Helper()
	r := streamResult{text: map[int]string{}, reasoning: map[int]string{}, tokens: map[int]int{}, finish: map[int]string{}}
	for i, ev := range evs {
		if string(ev.data) == "[DONE]" {
			if i != len(evs)-1 {
				t.Fatalf("[DONE] is event %d of %d", i, len(evs))
			}
			r.done = true
			continue
		}
		if ev.err != nil {
			t.Fatalf("event %d %q: %v", i, ev.data, ev.err)
		}
		ns, ok := ev.obj["sim_sent_ns"].(float64)
		if !ok {
			t.Fatalf("event %d has no sim_sent_ns: %s", i, ev.data)
		}
		r.sentNS = append(r.sentNS, int64(ns))
		choices := ev.obj["choices"].([]any)
		if len(choices) == 0 {
			r.usage = ev.obj["usage"].(map[string]any)
			continue
		}
		if len(choices) != 1 {
			t.Fatalf("event %d has %d choices, want 1", i, len(choices))
		}
		ch := choices[0].(map[string]any)
		idx := int(ch["index"].(float64))
		var tok string
		if d, ok := ch["delta"].(map[string]any); ok {
			if c, ok := d["content"].(string); ok && c != "" {
				tok = c
				r.text[idx] += c
			}
			if c, ok := d["reasoning_content"].(string); ok {
				tok = c
				r.reasoning[idx] += c
			}
		} else if c, ok := ch["text"].(string); ok {
			tok = c
			r.text[idx] += c
		}
		if tok != "" {
			r.tokens[idx]++
			if r.firstTok.IsZero() {
				r.firstTok = ev.at
			}
			r.tokTimes = append(r.tokTimes, ev.at)
			r.tokSent = append(r.tokSent, int64(ns))
		}
		if f, ok := ch["finish_reason"].(string); ok {
			if _, dup := r.finish[idx]; dup {
				t.Fatalf("choice %d finished twice", idx)
			}
			r.finish[idx] = f
		}
	}
	return r
}

// chatBody returns a chat request body.
func chatBody(stream bool, maxTokens int, msgs ...string) map[string]any {
	var m []map[string]any
	for i, s := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m = append(m, map[string]any{"role": role, "content": s})
	}
	b := map[string]any{"model": DefaultModel, "messages": m, "stream": stream}
	if maxTokens > 0 {
		b["max_tokens"] = maxTokens
	}
	return b
}

func decodeJSON(t testing.TB, r io.Reader) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		t.Fatalf("decode response: %v", err)
	}
	return m
}

func num(t testing.TB, m map[string]any, path ...string) int {
	t.Helper()
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object in %v", strings.Join(path, "."), m)
		}
		v = mm[p]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%s = %v, not a number", strings.Join(path, "."), v)
	}
	return int(f)
}
