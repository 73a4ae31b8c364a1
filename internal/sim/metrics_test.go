package sim

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/metrics"
)

// scrapeSim reads the simulator's /metrics through the project's parser
// and returns the canonical quantities.
func scrapeSim(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q", ct)
	}
	ss, err := metrics.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range ss {
		if s.Canonical == "" || s.Engine != "vllm" || s.Labels["model_name"] != DefaultModel {
			t.Errorf("sample %+v", s)
		}
		out[s.Canonical] = *s.Value
	}
	return out
}

// TestMetricsFollowUsage: the prefix-cache counters move by exactly the
// prompt_tokens and cached_tokens each response reports, and the gauges
// read the server's state.
func TestMetricsFollowUsage(t *testing.T) {
	s, ts := newTestServer(t, Config{CacheTokens: 4096, BlockSize: 4, TTFTBase: 1, DecodePerToken: 1})
	if got := scrapeSim(t, ts.URL); len(got) != 8 || got[metrics.PrefixQueries] != 0 || got[metrics.KVUsage] != 0 {
		t.Fatalf("fresh server: %v", got)
	}
	long := strings.Repeat("the same long system prompt and question. ", 20)
	var prompt, cached, completion int
	for i, body := range []map[string]any{
		chatBody(false, 5, long),
		chatBody(false, 5, long),                      // cache hit on the whole prefix
		chatBody(false, 7, long, "an answer", "more"), // the prefix again, longer
	} {
		resp := post(t, ts.URL+"/v1/chat/completions", body)
		u := decodeJSON(t, resp.Body)
		prompt += num(t, u, "usage", "prompt_tokens")
		cached += num(t, u, "usage", "prompt_tokens_details", "cached_tokens")
		completion += num(t, u, "usage", "completion_tokens")
		got := scrapeSim(t, ts.URL)
		if got[metrics.PrefixQueries] != float64(prompt) || got[metrics.PrefixHits] != float64(cached) ||
			got[metrics.PromptTokens] != float64(prompt) || got[metrics.GenerationTokens] != float64(completion) {
			t.Errorf("after request %d: %v, want queries %d hits %d generation %d", i, got, prompt, cached, completion)
		}
		if got[metrics.Running] != 0 || got[metrics.Waiting] != 0 || got[metrics.Preemptions] != 0 {
			t.Errorf("idle server: %v", got)
		}
		st := s.Stats()
		if want := float64(st.CacheBlocks) / float64(4096/4); got[metrics.KVUsage] != want || want == 0 {
			t.Errorf("kv usage %v, want %v", got[metrics.KVUsage], want)
		}
	}
	if cached == 0 {
		t.Fatal("no cache hit: the test proves nothing")
	}
	resp := post(t, ts.URL+"/metrics", "")
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %s", resp.Status)
	}
}

// TestMetricsRunningDuringStream: while a stream is being generated the
// running gauge counts it and the KV usage includes its prompt's blocks.
func TestMetricsRunningDuringStream(t *testing.T) {
	_, ts := newTestServer(t, Config{CacheTokens: 4096, BlockSize: 4, DecodePerToken: 20 * time.Millisecond})
	resp := post(t, ts.URL+"/v1/chat/completions", chatBody(true, 50, strings.Repeat("a prompt of some length ", 10)))
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before a token: %v", err)
		}
		if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			break // a token was sent: the request is admitted and prefilled
		}
	}
	got := scrapeSim(t, ts.URL)
	if got[metrics.Running] != 1 || got[metrics.Waiting] != 0 || got[metrics.KVUsage] == 0 || got[metrics.GenerationTokens] != 0 {
		t.Errorf("mid-stream: %v, want 1 running, KV in use, no finished generation yet", got)
	}
	resp.Body.Close()
}

// TestEchoSecrets: with echo-secrets, /metrics writes the request's
// Authorization and X-* values into a valid exposition (name, label
// name, labels, HELP) and injected errors quote them.
func TestEchoSecrets(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig("echo-secrets=true,fail-every=1")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(method, path, body string) string {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-echo-123456")
		req.Header.Set("X-Team", "team-secret-9")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	expo := get("GET", "/metrics", "")
	ss, err := metrics.Parse(strings.NewReader(expo))
	if err != nil {
		t.Fatalf("not a valid exposition: %v\n%s", err, expo)
	}
	found := 0
	for _, s := range ss {
		if s.Name == "vllm:echo_Bearer_sk_echo_123456" && s.Labels["value"] == "Bearer sk-echo-123456" && s.Labels["v_Bearer_sk_echo_123456"] == "1" {
			found++
		}
	}
	if found != 1 || !strings.Contains(expo, "# HELP vllm:echo_team_secret_9 echoes X-Team: team-secret-9") {
		t.Errorf("echoed series not found:\n%s", expo)
	}
	body := get("POST", "/v1/chat/completions", `{"model":"mtkit-sim","messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(body, "sk-echo-123456") || !strings.Contains(body, base64.StdEncoding.EncodeToString([]byte("Bearer sk-echo-123456"))) {
		t.Errorf("injected error does not echo the headers: %s", body)
	}
}
