package inferenceperf

// Status says what mtrun does with a key of inference-perf's config.
type Status string

const (
	// Supported keys have inference-perf's meaning in mtrun.
	Supported Status = "supported"
	// Mapped keys are taken by an mtkit setting of the same purpose, or
	// have no effect in mtrun; a mapped key that changes nothing is
	// reported as a note (never dropped silently).
	Mapped Status = "mapped"
	// Refused keys are an error naming the key and the file.
	Refused Status = "refused"
)

// Key is one key of inference-perf's config, as a dotted path ("[]"
// stands for any element of a list), with what mtrun does with it.
type Key struct {
	Path   string
	Status Status
	// Note says how the key is taken (mapped) or why it is refused.
	Note string
}

// Keys lists every key of inference-perf's config (as of commit 7de5ef2)
// and a few older names, in the order docs/inference-perf.md lists them.
// A key not in this list is an error too: not a key of inference-perf.
var Keys = []Key{
	{"load", Supported, ""},
	{"load.type", Supported, "constant and poisson; concurrent, trace_replay and trace_session_replay are refused"},
	{"load.interval", Supported, "seconds between stages (default 1)"},
	{"load.stages", Supported, ""},
	{"load.stages[].rate", Supported, "requests a second"},
	{"load.stages[].duration", Supported, "seconds; the stage plans ⌊rate × duration⌋ requests"},
	{"load.stages[].num_requests", Refused, "a concurrent-load key; inference-perf refuses it for constant and poisson too"},
	{"load.stages[].concurrency_level", Refused, "a concurrent-load key; inference-perf refuses it for constant and poisson too"},
	{"load.stages[].concurrent_sessions", Refused, "trace_session_replay is not supported"},
	{"load.stages[].session_rate", Refused, "trace_session_replay is not supported"},
	{"load.stages[].num_sessions", Refused, "trace_session_replay is not supported"},
	{"load.stages[].timeout", Refused, "trace_session_replay is not supported"},
	{"load.sweep", Supported, "a probe of num_requests in 5 s finds the saturation rate (a percentile of the rates at which requests in flight drain), then num_stages stages up to it"},
	{"load.sweep.type", Supported, "linear or geometric spacing of the stages' rates up to the saturation rate"},
	{"load.sweep.num_requests", Supported, "requests of the probe, sent in 5 s (default 2000)"},
	{"load.sweep.timeout", Supported, "seconds the probe is measured for (default 60)"},
	{"load.sweep.num_stages", Supported, "stages generated (default 5)"},
	{"load.sweep.stage_duration", Supported, "seconds of each generated stage (default 180)"},
	{"load.sweep.saturation_percentile", Supported, "percentile of the probe's drain rates taken as the saturation rate (default 95)"},
	{"load.num_workers", Mapped, "mtrun has no worker processes: every session sends one request at a time, which is what worker-local sessions give; with worker_max_concurrency it bounds the requests in flight"},
	{"load.worker_max_concurrency", Mapped, "num_workers × worker_max_concurrency bounds the sessions in progress when it is below the number of sessions (mtrun --max-concurrency)"},
	{"load.worker_max_tcp_connections", Mapped, "mtrun sizes its connection pool to the concurrency"},
	{"load.base_seed", Supported, "seeds the arrival times (mtrun --seed)"},
	{"load.request_timeout", Supported, "seconds (mtrun --request-timeout)"},
	{"load.trace", Refused, "trace_replay is not supported; mtrun reads traces as input files (docs/traces.md)"},
	{"load.circuit_breakers", Refused, "circuit breakers are not supported (an empty list is accepted)"},
	{"load.lora_traffic_split", Refused, "LoRA traffic splits are not supported"},

	{"api", Supported, ""},
	{"api.type", Supported, "completion (/v1/completions) or chat (/v1/chat/completions); anthropic_messages is refused"},
	{"api.streaming", Supported, "mtrun --no-stream when false (inference-perf's default)"},
	{"api.headers", Supported, "sent with every request (mtrun --header)"},
	{"api.session_id_header_key", Supported, "this header carries the session id (mtrun --session-header)"},
	{"api.session_token_header_key", Supported, "the session token the server sends back in this header is echoed (mtrun --session-token-header)"},
	{"api.slo_unit", Refused, "per-request SLO headers are not supported"},
	{"api.slo_tpot_header", Refused, "per-request SLO headers are not supported"},
	{"api.slo_ttft_header", Refused, "per-request SLO headers are not supported"},
	{"api.response_format", Refused, "structured output is not supported; use mtrun --extra-body"},

	{"server", Supported, ""},
	{"server.type", Supported, "vllm, sglang, tgi or mock: recorded; the requests are OpenAI-compatible for all"},
	{"server.model_name", Supported, "mtrun --model; the first id of /v1/models when absent"},
	{"server.base_url", Supported, "mtrun --url"},
	{"server.ignore_eos", Supported, "mtrun --ignore-eos; true by default, as in inference-perf"},
	{"server.api_key", Supported, "mtrun --api-key (never written to records or logs)"},
	{"server.cert_path", Refused, "client TLS certificates are not supported"},
	{"server.key_path", Refused, "client TLS certificates are not supported"},

	{"tokenizer", Mapped, ""},
	{"tokenizer.pretrained_model_name_or_path", Mapped, "a local model directory is the tokenizer (mtrun --tokenizer); a hub name is not downloaded: the default tokenizer counts tokens, with a note"},
	{"tokenizer.trust_remote_code", Mapped, "mtrun runs no tokenizer code"},
	{"tokenizer.token", Mapped, "mtrun downloads nothing, so the token is not used (nor written anywhere)"},

	{"data", Supported, ""},
	{"data.type", Supported, "shared_prefix; every other generator is refused"},
	{"data.shared_prefix", Supported, ""},
	{"data.shared_prefix.num_unique_system_prompts", Supported, "prompt groups: one system prompt each"},
	{"data.shared_prefix.num_groups", Supported, "older name of num_unique_system_prompts"},
	{"data.shared_prefix.num_users_per_system_prompt", Supported, "users (sessions, with multi-turn) per group"},
	{"data.shared_prefix.num_prompts_per_group", Supported, "older name of num_users_per_system_prompt"},
	{"data.shared_prefix.system_prompt_len", Supported, "tokens, or a distribution (drawn once per group)"},
	{"data.shared_prefix.question_len", Supported, "tokens, or a distribution (drawn once per user)"},
	{"data.shared_prefix.output_len", Supported, "tokens (max_tokens), or a distribution (drawn once per user)"},
	{"data.shared_prefix.seed", Supported, "seeds the lengths and the text"},
	{"data.shared_prefix.question_distribution", Supported, "older form of a question_len distribution"},
	{"data.shared_prefix.output_distribution", Supported, "older form of an output_len distribution"},
	{"data.shared_prefix.enable_multi_turn_chat", Supported, "user sessions: each user's rounds carry the group's system prompt and the whole history"},
	{"data.shared_prefix.group_as_user_session", Supported, "the name enable_multi_turn_chat had when inference-perf introduced it"},
	{"data.shared_prefix.multimodal", Refused, "multimodal payloads are not supported"},
	{"data.path", Refused, "datasets are mtrun input files (mtconvert's formats), not config keys"},
	{"data.corpus_file_path", Refused, "mtrun's text comes from its embedded corpus"},
	{"data.input_distribution", Refused, "for the synthetic and random generators, which are not supported"},
	{"data.output_distribution", Refused, "for the synthetic and random generators, which are not supported"},
	{"data.multimodal", Refused, "multimodal payloads are not supported"},
	{"data.trace", Refused, "for the random generator, which is not supported"},
	{"data.otel_trace_replay", Refused, "OTel trace replay is not supported"},
	{"data.weka_trace_replay", Refused, "Weka trace replay is not supported"},
	{"data.conversation_replay", Refused, "conversation replay is not supported; convert the conversations with mtconvert"},
	{"data.visionarena", Refused, "multimodal datasets are not supported"},
	{"data.use_chat_template", Refused, "for the random generator, which is not supported"},

	{"metrics", Mapped, ""},
	{"metrics.type", Mapped, "prometheus or default: mtrun scrapes the server's own /metrics (docs/server-metrics.md)"},
	{"metrics.prometheus", Mapped, ""},
	{"metrics.prometheus.url", Mapped, "a Prometheus server is not queried: mtrun scrapes the server's /metrics itself (mtrun --metrics-url for other endpoints)"},
	{"metrics.prometheus.scrape_interval", Mapped, "seconds between scrapes (mtrun --metrics-interval)"},
	{"metrics.prometheus.filters", Mapped, "every metric of the endpoint is kept"},
	{"metrics.prometheus.google_managed", Refused, "Google Managed Prometheus is not supported (false is accepted)"},

	{"report", Mapped, "mtrun writes one record per request; mtstats makes the summaries (per stage with --by stage)"},
	{"report.request_lifecycle", Mapped, ""},
	{"report.request_lifecycle.summary", Mapped, ""},
	{"report.request_lifecycle.per_stage", Mapped, ""},
	{"report.request_lifecycle.per_request", Mapped, ""},
	{"report.request_lifecycle.per_adapter", Mapped, ""},
	{"report.request_lifecycle.per_adapter_stage", Mapped, ""},
	{"report.request_lifecycle.percentiles", Mapped, ""},
	{"report.request_lifecycle.use_server_output_tokens", Mapped, "records keep both the server's and the client's token counts"},
	{"report.request_lifecycle.max_error_messages", Mapped, ""},
	{"report.prometheus", Mapped, ""},
	{"report.prometheus.summary", Mapped, ""},
	{"report.prometheus.per_stage", Mapped, ""},
	{"report.session_lifecycle", Mapped, ""},
	{"report.session_lifecycle.summary", Mapped, ""},
	{"report.session_lifecycle.per_stage", Mapped, ""},
	{"report.session_lifecycle.per_session", Mapped, ""},
	{"report.goodput", Mapped, "use mtstats --slo"},
	{"report.goodput.constraints", Mapped, "use mtstats --slo"},

	{"storage", Mapped, "mtrun writes where --records, --metrics-file and --manifest say"},
	{"storage.local_storage", Mapped, ""},
	{"storage.local_storage.path", Mapped, ""},
	{"storage.local_storage.report_file_prefix", Mapped, ""},
	{"storage.google_cloud_storage", Refused, "cloud storage is not supported"},
	{"storage.simple_storage_service", Refused, "cloud storage is not supported"},

	{"circuit_breakers", Refused, "circuit breakers are not supported"},
}

// distKeys are the keys of an inference-perf distribution (system_prompt_len,
// question_len and output_len as mappings, and the older *_distribution).
var distKeys = map[string]string{
	"min": "", "max": "", "mean": "", "std_dev": "", "variance": "", "skew": "", "type": "",
	"total_count": "not used by the shared_prefix generator, in inference-perf either",
}

// keyIndex finds a Key by path.
var keyIndex = func() map[string]*Key {
	m := make(map[string]*Key, len(Keys))
	for i := range Keys {
		m[Keys[i].Path] = &Keys[i]
	}
	return m
}()
