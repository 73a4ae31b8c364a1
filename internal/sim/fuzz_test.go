package sim

import (
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
