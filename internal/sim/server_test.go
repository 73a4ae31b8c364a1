package sim

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/tokenize"
)

func TestModels(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{Model: "m1", MaxModelLen: 4096})
	for _, path := range []string{"/v1/models", "/models"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeJSON(t, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
		data := m["data"].([]any)
		if len(data) != 1 {
			t.Fatalf("%s: %d models", path, len(data))
		}
		d := data[0].(map[string]any)
		if d["id"] != "m1" || d["object"] != "model" || d["owned_by"] == nil || num(t, d, "max_model_len") != 4096 {
			t.Errorf("%s: model entry %v", path, d)
		}
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{Seed: 1, ReasoningTokens: 3})
	tok := s.Config().Tokenizer
	tests := []struct {
		name       string
		path       string
		body       map[string]any
		wantTokens int // 0: any in [1, DefaultMaxTokens]
		wantFinish string
		wantReason int
	}{
		{"chat max_tokens", "/v1/chat/completions", chatBody(false, 7, "hello"), 7, "length", 3},
		{"chat max_completion_tokens", "/v1/chat/completions", map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_completion_tokens": 5, "max_tokens": 99,
		}, 5, "length", 3},
		{"chat natural length", "/v1/chat/completions", chatBody(false, 0, "hello there"), 0, "stop", 3},
		{"chat ignore_eos", "/v1/chat/completions", map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "x"}}, "ignore_eos": true,
		}, DefaultMaxTokens, "length", 3},
		{"chat content parts", "/v1/chat/completions", map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "part one"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:,"}},
			}}}, "max_tokens": 4,
		}, 4, "length", 3},
		{"completions string", "/v1/completions", map[string]any{"prompt": "Once upon a time", "max_tokens": 9}, 9, "length", 0},
		{"completions ids", "/v1/completions", map[string]any{"prompt": []int{1, 2, 3}, "max_tokens": 2}, 2, "length", 0},
		{"completions min_tokens", "/v1/completions", map[string]any{"prompt": "a", "min_tokens": 200}, 0, "stop", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := post(t, ts.URL+tt.path, tt.body)
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			m := decodeJSON(t, resp.Body)
			choices := m["choices"].([]any)
			if len(choices) != 1 {
				t.Fatalf("%d choices", len(choices))
			}
			ch := choices[0].(map[string]any)
			if ch["finish_reason"] != tt.wantFinish {
				t.Errorf("finish_reason %v, want %s", ch["finish_reason"], tt.wantFinish)
			}
			var text, reasoning string
			if strings.Contains(tt.path, "chat") {
				msg := ch["message"].(map[string]any)
				if msg["role"] != "assistant" {
					t.Errorf("role %v", msg["role"])
				}
				text, _ = msg["content"].(string)
				reasoning, _ = msg["reasoning_content"].(string)
			} else {
				text = ch["text"].(string)
			}
			got := num(t, m, "usage", "completion_tokens")
			if tt.wantTokens > 0 && got != tt.wantTokens {
				t.Errorf("completion_tokens %d, want %d", got, tt.wantTokens)
			}
			if tt.wantTokens == 0 && (got < 1 || got > DefaultMaxTokens) {
				t.Errorf("completion_tokens %d out of [1, %d]", got, DefaultMaxTokens)
			}
			if min, ok := tt.body["min_tokens"].(int); ok && got < min {
				t.Errorf("completion_tokens %d < min_tokens %d", got, min)
			}
			// The vocabulary is single tokens of o200k, so re-tokenizing
			// the text gives the server's count.
			if n := tok.Count(reasoning) + tok.Count(text); n != got {
				t.Errorf("client-side count %d != completion_tokens %d (%q + %q)", n, got, reasoning, text)
			}
			if tt.wantReason > 0 {
				if n := tok.Count(reasoning); n != tt.wantReason {
					t.Errorf("reasoning tokens %d, want %d", n, tt.wantReason)
				}
				if num(t, m, "usage", "completion_tokens_details", "reasoning_tokens") != tt.wantReason {
					t.Errorf("usage reasoning_tokens: %v", m["usage"])
				}
			}
			pt := num(t, m, "usage", "prompt_tokens")
			if pt < 1 || num(t, m, "usage", "total_tokens") != pt+got {
				t.Errorf("usage %v", m["usage"])
			}
			num(t, m, "usage", "prompt_tokens_details", "cached_tokens")
			if m["model"] != DefaultModel || m["id"] == "" || m["sim_sent_ns"] == nil {
				t.Errorf("response %v", m)
			}
		})
	}
}

func TestStreaming(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{Seed: 2})
	_, tsR := newTestServer(t, Config{Seed: 2, ReasoningTokens: 4})
	tests := []struct {
		name       string
		url        string
		body       map[string]any
		n          int
		tokens     int
		reasoning  int
		usage      bool
		continuous bool
	}{
		{"chat", ts.URL + "/v1/chat/completions", chatBody(true, 6, "hi"), 1, 6, 0, false, false},
		{"chat usage", ts.URL + "/v1/chat/completions", with(chatBody(true, 6, "hi"), "stream_options", map[string]any{"include_usage": true}), 1, 6, 0, true, false},
		{"chat continuous", ts.URL + "/v1/chat/completions", with(chatBody(true, 3, "hi"), "stream_options", map[string]any{"include_usage": true, "continuous_usage_stats": true}), 1, 3, 0, true, true},
		{"chat continuous needs include_usage", ts.URL + "/v1/chat/completions", with(chatBody(true, 3, "hi"), "stream_options", map[string]any{"continuous_usage_stats": true}), 1, 3, 0, false, false},
		{"chat n=3", ts.URL + "/v1/chat/completions", with(with(chatBody(true, 4, "hi"), "n", 3), "stream_options", map[string]any{"include_usage": true}), 3, 4, 0, true, false},
		{"chat reasoning", tsR.URL + "/v1/chat/completions", with(chatBody(true, 10, "hi"), "stream_options", map[string]any{"include_usage": true}), 1, 10, 4, true, false},
		{"completions", ts.URL + "/v1/completions", map[string]any{"prompt": "x", "max_tokens": 5, "stream": true}, 1, 5, 0, false, false},
		{"completions usage n=2", ts.URL + "/v1/completions", map[string]any{"prompt": "x", "max_tokens": 5, "stream": true, "n": 2,
			"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}}, 2, 5, 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := post(t, tt.url, tt.body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			evs, err := readSSE(t, resp.Body)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			r := summarize(t, evs)
			if !r.done {
				t.Fatal("no [DONE]")
			}
			for c := range tt.n {
				if r.tokens[c] != tt.tokens {
					t.Errorf("choice %d: %d token chunks, want %d", c, r.tokens[c], tt.tokens)
				}
				if r.finish[c] != "length" {
					t.Errorf("choice %d: finish %q", c, r.finish[c])
				}
				if tt.reasoning > 0 && r.reasoning[c] == "" {
					t.Errorf("choice %d: no reasoning_content", c)
				}
			}
			if len(r.tokens) != tt.n {
				t.Errorf("%d choices, want %d", len(r.tokens), tt.n)
			}
			if (r.usage != nil) != tt.usage {
				t.Fatalf("usage chunk present=%v, want %v", r.usage != nil, tt.usage)
			}
			if tt.usage {
				if got := num(t, r.usage, "completion_tokens"); got != tt.n*tt.tokens {
					t.Errorf("usage completion_tokens %d, want %d", got, tt.n*tt.tokens)
				}
				num(t, r.usage, "prompt_tokens_details", "cached_tokens")
				if tt.reasoning > 0 && num(t, r.usage, "completion_tokens_details", "reasoning_tokens") != tt.reasoning {
					t.Errorf("reasoning_tokens: %v", r.usage)
				}
			}
			for i, ev := range evs {
				if ev.obj == nil || len(ev.obj["choices"].([]any)) == 0 {
					continue
				}
				_, has := ev.obj["usage"]
				if has != tt.continuous {
					t.Fatalf("event %d: per-chunk usage present=%v, want %v", i, has, tt.continuous)
				}
			}
			for i := 1; i < len(r.sentNS); i++ {
				if r.sentNS[i] < r.sentNS[i-1] {
					t.Fatalf("sim_sent_ns goes back at event %d", i)
				}
			}
		})
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func TestValidation(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{MaxModelLen: 100, MaxRunning: 4})
	_, tsKey := newTestServer(t, Config{APIKey: "sekret"})
	chat := ts.URL + "/v1/chat/completions"
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name   string
		method string
		url    string
		body   string
		header string
		status int
		code   string
	}{
		{"bad json", "POST", chat, `{"messages":`, "", 400, "invalid_json"},
		{"empty body", "POST", chat, ``, "", 400, "invalid_json"},
		{"trailing data", "POST", chat, `{"messages":[{"role":"user","content":"x"}]} {}`, "", 400, "invalid_json"},
		{"wrong type", "POST", chat, `{"messages":"hi"}`, "", 400, "invalid_json"},
		{"missing messages", "POST", chat, `{"model":"mtkit-sim"}`, "", 400, "missing_field"},
		{"bad role", "POST", chat, `{"messages":[{"role":"robot","content":"x"}]}`, "", 400, "invalid_value"},
		{"bad content", "POST", chat, `{"messages":[{"role":"user","content":5}]}`, "", 400, "invalid_value"},
		{"unknown model", "POST", chat, `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, "", 404, "model_not_found"},
		{"max_tokens 0", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, "", 400, "invalid_value"},
		{"min over max", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"max_tokens":2,"min_tokens":3}`, "", 400, "invalid_value"},
		{"n too large", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"n":5}`, "", 400, "invalid_value"},
		{"temperature", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"temperature":3}`, "", 400, "invalid_value"},
		{"stream_options without stream", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, "", 400, "invalid_value"},
		{"prompt too long", "POST", chat, `{"messages":[{"role":"user","content":"` + long + `"}]}`, "", 400, "context_length_exceeded"},
		{"prompt+max over len", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"max_tokens":95}`, "", 400, "context_length_exceeded"},
		{"completions no prompt", "POST", ts.URL + "/v1/completions", `{"max_tokens":3}`, "", 400, "missing_field"},
		{"completions batch", "POST", ts.URL + "/v1/completions", `{"prompt":["a","b"]}`, "", 400, "invalid_value"},
		{"completions empty", "POST", ts.URL + "/v1/completions", `{"prompt":""}`, "", 400, "invalid_value"},
		{"completions echo", "POST", ts.URL + "/v1/completions", `{"prompt":"a","echo":true}`, "", 400, "invalid_value"},
		{"GET completions", "GET", chat, ``, "", 405, "method_not_allowed"},
		{"POST models", "POST", ts.URL + "/v1/models", `{}`, "", 405, "method_not_allowed"},
		{"unknown path", "GET", ts.URL + "/v1/embeddings", ``, "", 404, "not_found"},
		{"no api key", "POST", tsKey.URL + "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, "", 401, "invalid_api_key"},
		{"wrong api key", "GET", tsKey.URL + "/v1/models", ``, "Bearer nope", 401, "invalid_api_key"},
		{"right api key", "POST", tsKey.URL + "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`, "Bearer sekret", 200, ""},
		{"conversation_id and seed accepted", "POST", chat, `{"messages":[{"role":"user","content":"x"}],"max_tokens":1,"conversation_id":"c1","seed":7,"temperature":0.7}`, "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.code == "" {
				return
			}
			m := decodeJSON(t, resp.Body)
			e, ok := m["error"].(map[string]any)
			if !ok {
				t.Fatalf("no error object: %v", m)
			}
			if e["code"] != tt.code || e["message"] == "" || e["type"] == "" {
				t.Errorf("error %v, want code %s", e, tt.code)
			}
		})
	}
}

func TestPrefixCache(t *testing.T) {
	t.Parallel()
	// 20 blocks of 16 tokens.
	s, ts := newTestServer(t, Config{Seed: 3, CacheTokens: 320, BlockSize: 16})
	url := ts.URL + "/v1/chat/completions"
	usageOf := func(body map[string]any) (prompt, cached int) {
		t.Helper()
		m := decodeJSON(t, post(t, url, body).Body)
		return num(t, m, "usage", "prompt_tokens"), num(t, m, "usage", "prompt_tokens_details", "cached_tokens")
	}
	user1 := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 10)
	turn1 := chatBody(false, 20, user1)
	p1, c1 := usageOf(turn1)
	if c1 != 0 {
		t.Fatalf("turn 1 cached %d, want 0", c1)
	}
	// The same request again: everything but the last partial block and
	// the last token is cached.
	p1b, c1b := usageOf(turn1)
	if want := (p1 - 1) / 16 * 16; p1b != p1 || c1b != want {
		t.Fatalf("repeat: prompt %d cached %d, want %d cached", p1b, c1b, want)
	}
	// Turn 2 replays turn 1's answer: the cached prefix covers the
	// history, including the generated tokens.
	m := decodeJSON(t, post(t, url, turn1).Body)
	answer := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	p2, c2 := usageOf(chatBody(false, 5, user1, answer, "and then?"))
	if c2 <= c1b || c2%16 != 0 || c2 >= p2 {
		t.Fatalf("turn 2: prompt %d cached %d, want > %d and a multiple of 16", p2, c2, c1b)
	}
	if c2 < (p1+20)/16*16-16 {
		t.Errorf("turn 2 cached %d does not reach past turn 1's prompt+output (%d)", c2, p1+20)
	}
	// Other conversations fill the cache and evict the first one.
	for i := range 4 {
		usageOf(chatBody(false, 1, strings.Repeat("other conversation number "+string(rune('a'+i))+" ", 40)))
	}
	if _, c := usageOf(turn1); c != 0 {
		t.Fatalf("after eviction cached %d, want 0", c)
	}
	st := s.Stats()
	if st.CacheEvictions == 0 || st.CacheBlocks > 20 || st.CachedTokens == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestPrefixCacheUnit(t *testing.T) {
	t.Parallel()
	ids := func(seed, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = seed*1000 + i
		}
		return out
	}
	a := blockHashes(ids(1, 64), 16) // 4 blocks
	b := blockHashes(ids(2, 32), 16) // 2 blocks
	if len(a) != 4 || len(blockHashes(ids(1, 63), 16)) != 3 {
		t.Fatal("blockHashes counts only full blocks")
	}
	// Chained: the same block after a different prefix hashes differently.
	x := append(ids(1, 16), ids(3, 16)...)
	y := append(ids(2, 16), ids(3, 16)...)
	if blockHashes(x, 16)[1] == blockHashes(y, 16)[1] {
		t.Fatal("block hash does not depend on the prefix")
	}
	c := newPrefixCache(5, 0)
	match := func(hs []uint64) int {
		local, external := c.match(hs)
		if external != 0 {
			t.Fatalf("external hit %d without an offload tier", external)
		}
		return local
	}
	c.insert(a)
	if got := match(a); got != 4 {
		t.Fatalf("match %d, want 4", got)
	}
	if got := match(a[:2]); got != 2 {
		t.Fatalf("match prefix %d, want 2", got)
	}
	c.insert(b) // 6 blocks > 5: evicts a's tail, not its head
	if got := match(a); got != 3 {
		t.Fatalf("after eviction match %d, want 3 (tail evicted first)", got)
	}
	if got := match(b); got != 2 {
		t.Fatalf("match b %d, want 2", got)
	}
	if sz := c.size(); sz.blocks != 5 || sz.evictions != 1 || sz.offloadBlocks != 0 || sz.offloadEvictions != 0 {
		t.Fatalf("size %+v", sz)
	}
	if local, external := newPrefixCache(0, 0).match(a); local != 0 || external != 0 {
		t.Fatalf("disabled cache matched %d+%d", local, external)
	}
}

func TestQueueing(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{MaxRunning: 1, DecodePerToken: 20 * time.Millisecond})
	url := ts.URL + "/v1/chat/completions"
	start := time.Now()
	var wg sync.WaitGroup
	ends := make([]time.Duration, 3)
	for i := range ends {
		wg.Go(func() {
			resp := post(t, url, chatBody(false, 5, "q"))
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
			ends[i] = time.Since(start)
		})
	}
	wg.Wait()
	last := max(ends[0], ends[1], ends[2])
	// Each request decodes 4 intervals of 20ms; run one at a time they
	// take at least 3×80ms.
	if last < 220*time.Millisecond {
		t.Errorf("3 requests with max-running=1 finished in %v, want >= 240ms", last)
	}
	st := s.Stats()
	if st.Queued < 2 || st.Running != 0 || st.Waiting != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestAdmissionCancel(t *testing.T) {
	t.Parallel()
	a := &admission{limit: 2}
	ctx := context.Background()
	if err := a.acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- a.acquire(cctx, 1) }()
	for a.queued.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("acquire returned nil after cancel")
	}
	got := make(chan struct{})
	go func() {
		if err := a.acquire(ctx, 2); err == nil {
			close(got)
		}
	}()
	a.release(2)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not admitted after release")
	}
	if a.running.Load() != 2 || a.queued.Load() != 0 {
		t.Fatalf("running %d queued %d", a.running.Load(), a.queued.Load())
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "same"}}, "n": 2}
	run := func(seed int64) string {
		_, ts := newTestServer(t, Config{Seed: seed})
		var out []string
		for range 2 {
			m := decodeJSON(t, post(t, ts.URL+"/v1/chat/completions", body).Body)
			b, _ := json.Marshal([]any{m["id"], m["choices"]})
			out = append(out, string(b))
		}
		return strings.Join(out, "\n")
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Fatalf("same seed, different output:\n%s\n%s", a, b)
	}
	if a == c {
		t.Fatalf("different seeds, same output:\n%s", a)
	}
	// The request seed fixes the text whatever the prompt.
	_, ts := newTestServer(t, Config{Seed: 1})
	text := func(prompt string) string {
		m := decodeJSON(t, post(t, ts.URL+"/v1/completions", map[string]any{"prompt": prompt, "seed": 42, "max_tokens": 8}).Body)
		return m["choices"].([]any)[0].(map[string]any)["text"].(string)
	}
	if x, y := text("one"), text("two"); x != y {
		t.Errorf("request seed 42 gave %q and %q", x, y)
	}
}

func TestClientDisconnect(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{DecodePerToken: 50 * time.Millisecond, MaxRunning: 1})
	ctx, cancel := context.WithCancel(context.Background())
	resp := postCtx(t, ctx, ts.URL+"/v1/chat/completions", chatBody(true, 1000, "long"))
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Running != 0 || s.Stats().Canceled != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("request still running after client went away: %+v", s.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The slot is free again.
	m := decodeJSON(t, post(t, ts.URL+"/v1/chat/completions", chatBody(false, 1, "next")).Body)
	if num(t, m, "usage", "completion_tokens") != 1 {
		t.Fatal("next request failed")
	}
}

func TestVocabExact(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tok, err := tokenize.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := newVocab(tok)
		if err != nil {
			t.Fatal(err)
		}
		if !v.exact {
			t.Fatalf("%s: vocabulary not exact", name)
		}
		for seed := range uint64(20) {
			text := v.text(v.span(rand.New(rand.NewPCG(seed, 0)), 300))
			if n := tok.Count(text); n != 300 {
				t.Fatalf("%s seed %d: %d tokens for 300 pieces: %q", name, seed, n, text)
			}
		}
	}
}
