package sim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// serveMetrics answers GET /metrics in the Prometheus text format with
// vLLM's names for what the simulator models (no API key needed, as in
// vLLM):
//
//   - vllm:num_requests_running / vllm:num_requests_waiting: sequences
//     running and requests waiting for Config.MaxRunning, now;
//   - vllm:kv_cache_usage_perc: blocks held by the prefix cache's local
//     tier over its capacity (0 without a cache). The simulator has no
//     other KV memory: unlike vLLM, which counts cached but free blocks as
//     free, every cached block counts as used;
//   - vllm:prefix_cache_queries_total / vllm:prefix_cache_hits_total: the
//     local tier, as vLLM's KV cache manager counts them, in tokens: each
//     admitted request adds its prompt length to the queries and the
//     tokens found in the local tier to the hits, when it is admitted;
//   - vllm:external_prefix_cache_queries_total /
//     vllm:external_prefix_cache_hits_total (only with an offload tier):
//     as vLLM's scheduler counts a KV connector's, in tokens: each
//     admitted request adds its prompt length less the local hits to the
//     queries and the tokens found in the offload tier to the hits. The
//     cached_tokens of a response are the sum of both tiers' hits;
//   - vllm:prompt_tokens_total: prompt tokens of admitted requests;
//     vllm:generation_tokens_total: output tokens, added when a response
//     has been generated in full;
//   - vllm:num_preemptions_total: always 0 (nothing is preempted).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: fmt.Sprintf("%s %s: method not allowed, use GET", r.Method, r.URL.Path)})
		return
	}
	st := s.Stats()
	usage := 0.0
	if c := s.cache.local.capBlocks; c > 0 {
		usage = float64(st.CacheBlocks) / float64(c)
	}
	labels := `{engine="0",model_name=` + strconv.Quote(s.cfg.Model) + `}`
	var b strings.Builder
	metric := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s%s %s\n", name, help, name, typ, name, labels, strconv.FormatFloat(v, 'g', -1, 64))
	}
	metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(st.Running))
	metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(st.Waiting))
	metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", usage)
	metric("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", float64(st.PromptTokens))
	metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", float64(st.LocalHitTokens))
	if s.cfg.Faults.EchoSecrets {
		echoMetrics(&b, r)
	}
	if s.cfg.OffloadTokens > 0 {
		metric("vllm:external_prefix_cache_queries_total", "counter",
			"External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.", float64(st.ExternalQueries))
		metric("vllm:external_prefix_cache_hits_total", "counter",
			"External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.", float64(st.ExternalHits))
	}
	metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", 0)
	metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", float64(st.PromptTokens))
	metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", float64(st.CompletionTokens))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// secretHeaders returns the values of r's Authorization and X-* headers,
// by name, in name order: what Faults.EchoSecrets echoes.
func secretHeaders(r *http.Request) [][2]string {
	var out [][2]string
	for k, vs := range r.Header {
		if k == "Authorization" || strings.HasPrefix(k, "X-") {
			for _, v := range vs {
				out = append(out, [2]string{k, v})
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	return out
}

// echoHeaders renders the secret headers of r plainly, base64-encoded
// (standard and URL alphabets) and JSON-escaped twice.
func echoHeaders(r *http.Request) string {
	var b strings.Builder
	for _, h := range secretHeaders(r) {
		once, _ := json.Marshal(h[1])
		twice, _ := json.Marshal(string(once))
		fmt.Fprintf(&b, "%s=%s b64=%s b64url=%s json=%s; ", h[0], h[1],
			base64.StdEncoding.EncodeToString([]byte(h[1])), base64.URLEncoding.EncodeToString([]byte(h[1])), twice)
	}
	return b.String()
}

// nameSafe turns s into a Prometheus label name.
func nameSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
}

// echoMetrics writes one gauge per secret header of r with the value in
// its name, a label name, its labels (plain and base64) and HELP text.
func echoMetrics(b *strings.Builder, r *http.Request) {
	for i, h := range secretHeaders(r) {
		name := "vllm:echo_" + nameSafe(h[1])
		fmt.Fprintf(b, "# HELP %s echoes %s: %s\n# TYPE %s gauge\n", name, h[0], h[1], name)
		fmt.Fprintf(b, "%s{header=%q,value=%q,b64=%q,%s=\"1\"} %d\n", name, h[0], h[1], base64.StdEncoding.EncodeToString([]byte(h[1])), "v_"+nameSafe(h[1]), i)
	}
}
