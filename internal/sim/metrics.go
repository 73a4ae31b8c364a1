package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
