package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"mtkit-sim","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"system","content":null},{"role":"user","content":[{"type":"text","text":"a"}]}],"n":2,"max_tokens":3}`,
		`{"prompt":"abc","max_tokens":1,"min_tokens":1,"ignore_eos":true}`,
		`{"prompt":[1,2,3]}`,
		`{"prompt":[[5]]}`,
		`{"prompt":["x"],"seed":-5,"conversation_id":12}`,
		`{"messages":[{"role":"user","content":5}]}`,
		`{"max_completion_tokens":-1}`,
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
		`{"messages":[{"role":"tool","content":"r"}],"tools":{}}`,
		`[]`, `null`, `{`, ``,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, completions bool) {
		kind := chatEndpoint
		if completions {
			kind = completionsEndpoint
		}
		req, aerr := parseRequest(kind, []byte(body), DefaultModel, 8)
		if (req == nil) == (aerr == nil) {
			t.Fatalf("parseRequest(%q) = %v, %v: want exactly one", body, req, aerr)
		}
		if aerr != nil {
			if aerr.status < 400 || aerr.status > 499 || aerr.message == "" || aerr.code == "" {
				t.Fatalf("bad error %+v", aerr)
			}
			return
		}
		if req.n < 1 || req.n > 8 || req.maxTokens < 0 || req.minTokens < 0 || (req.maxTokens > 0 && req.minTokens > req.maxTokens) {
			t.Fatalf("invalid request accepted: %+v", req)
		}
		if len(req.segments) == 0 && len(req.promptIDs) == 0 {
			t.Fatalf("request without a prompt accepted: %+v", req)
		}
		if req.model != DefaultModel {
			t.Fatalf("model %q", req.model)
		}
	})
}

// FuzzServe drives the whole handler with arbitrary bodies: it must never
// panic, and must answer either an OpenAI error or a well-formed response.
func FuzzServe(f *testing.F) {
	s, err := New(Config{MaxModelLen: 512, DefaultMaxTokens: 8, CacheTokens: 256, OffloadTokens: 256, BlockSize: 4, ReasoningTokens: 2})
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3}`,
		`{"messages":[{"role":"user","content":"hi"}],"stream":true,"n":2,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`,
		`{"prompt":[1,2,3,4,5,6,7,8,9],"stream":true,"min_tokens":8}`,
		`{"prompt":"x","max_tokens":600}`,
		`{"messages":[{"role":"assistant","content":null}],"ignore_eos":true}`,
	} {
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, body string, completions bool) {
		path := "/v1/chat/completions"
		if completions {
			path = "/v1/completions"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch {
		case rec.Code != http.StatusOK:
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			if rec.Code < 400 || json.Unmarshal(out, &e) != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("status %d with body %q", rec.Code, out)
			}
		case strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
				t.Fatalf("stream does not end with [DONE]: %q", out)
			}
			for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n")) {
				data, ok := bytes.CutPrefix(line, []byte("data: "))
				if !ok || (string(data) != "[DONE]" && !json.Valid(data)) {
					t.Fatalf("bad SSE line %q", line)
				}
			}
		default:
			if !json.Valid(out) {
				t.Fatalf("invalid JSON body %q", out)
			}
		}
	})
}
