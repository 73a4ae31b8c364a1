// Package metrics scrapes an inference server's Prometheus endpoint during
// a run and keeps the samples as a series file next to the records: one
// JSON line per sample (time, replica, url, metric name, labels, value,
// type), with the engines' names for the same quantity (vLLM, SGLang, TGI,
// llama.cpp's server) tagged by one canonical name. Every series is kept;
// the canonical tag only names the ones mtstats knows how to read.
//
// The exposition format is parsed by github.com/prometheus/common/expfmt.
package metrics

import (
	"encoding/json"
	"strings"
	"time"
)

// Canonical quantities: the same thing under each engine's name.
const (
	Running             = "running"              // requests in the running batch (gauge)
	Waiting             = "waiting"              // requests queued (gauge)
	KVUsage             = "kv_usage"             // KV-cache usage, 0..1 (gauge)
	PrefixQueries       = "prefix_cache_queries" // prompt tokens looked up in the prefix cache (counter)
	PrefixHits          = "prefix_cache_hits"    // of which found (counter)
	ExternalPrefixQuery = "external_prefix_cache_queries"
	ExternalPrefixHits  = "external_prefix_cache_hits"
	Preemptions         = "preemptions"       // requests preempted (counter)
	PromptTokens        = "prompt_tokens"     // prompt tokens processed (counter)
	GenerationTokens    = "generation_tokens" // tokens generated (counter)
	// Up is the row written for every scrape: 1 when the endpoint
	// answered in the exposition format, 0 (with Sample.Error) when not.
	Up = "up"
)

// canonicalNames lists, for each canonical quantity, the sample names that
// carry it, most preferred first. Within one scrape only the first name
// present is tagged (vLLM 0.9 exposes both kv_cache_usage_perc and the
// deprecated gpu_cache_usage_perc; counting both would double it).
//
// Sources (see testdata/PROVENANCE.md): vLLM vllm/v1/metrics/loggers.py,
// SGLang docs/references/production_metrics.md and its metrics collector,
// llama.cpp tools/server/README.md, TGI's metrics reference.
var canonicalNames = []struct {
	canonical string
	names     []string
}{
	{Running, []string{"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size", "llamacpp:requests_processing"}},
	{Waiting, []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size", "llamacpp:requests_deferred"}},
	{KVUsage, []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"}},
	{PrefixQueries, []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"}},
	{PrefixHits, []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total", "sglang:cached_tokens_total"}},
	{ExternalPrefixQuery, []string{"vllm:external_prefix_cache_queries_total"}},
	{ExternalPrefixHits, []string{"vllm:external_prefix_cache_hits_total"}},
	{Preemptions, []string{"vllm:num_preemptions_total"}},
	{PromptTokens, []string{"vllm:prompt_tokens_total", "sglang:prompt_tokens_total", "llamacpp:prompt_tokens_total", "tgi_request_input_length_sum"}},
	{GenerationTokens, []string{"vllm:generation_tokens_total", "sglang:generation_tokens_total", "llamacpp:tokens_predicted_total", "tgi_request_generated_tokens_sum"}},
}

// engines maps a metric name prefix to the engine that uses it.
var engines = []struct{ prefix, engine string }{
	{"vllm:", "vllm"}, {"sglang:", "sglang"}, {"tgi_", "tgi"}, {"llamacpp:", "llamacpp"},
}

// EngineOf returns the engine whose naming a sample name follows, or "".
func EngineOf(name string) string {
	for _, e := range engines {
		if strings.HasPrefix(name, e.prefix) {
			return e.engine
		}
	}
	return ""
}

// Sample is one line of a series file: one value of one series at one
// scrape. Value is nil when the exposed value is NaN or ±Inf (JSON has no
// such numbers); NonFinite then holds "NaN", "+Inf" or "-Inf".
type Sample struct {
	RunID     string            `json:"run_id"`
	Time      time.Time         `json:"time"`
	Replica   int               `json:"replica"`
	URL       string            `json:"url"`
	Name      string            `json:"name"`
	Type      string            `json:"type"`
	Labels    map[string]string `json:"labels"`
	Value     *float64          `json:"value"`
	NonFinite string            `json:"nonfinite,omitempty"`
	Canonical string            `json:"canonical,omitempty"`
	Engine    string            `json:"engine,omitempty"`
	Error     string            `json:"error,omitempty"`
}

// TimeFormat is how a sample's time is written: UTC, always six
// fractional digits, which DuckDB's read_json detects as a TIMESTAMP.
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON writes s with its time in TimeFormat.
func (s Sample) MarshalJSON() ([]byte, error) {
	type plain Sample
	return json.Marshal(struct {
		Time string `json:"time"`
		plain
	}{s.Time.UTC().Format(TimeFormat), plain(s)})
}

// Tag sets Canonical on the samples of one scrape: for each canonical
// quantity, the samples of the first of its names present.
func Tag(samples []Sample) {
	present := make(map[string]bool, len(samples))
	for i := range samples {
		present[samples[i].Name] = true
	}
	chosen := make(map[string]string)
	for _, c := range canonicalNames {
		for _, n := range c.names {
			if present[n] {
				chosen[n] = c.canonical
				break
			}
		}
	}
	for i := range samples {
		if c, ok := chosen[samples[i].Name]; ok {
			samples[i].Canonical = c
		}
	}
}
