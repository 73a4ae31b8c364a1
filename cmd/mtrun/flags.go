package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/replay"
)

// newApp declares mtrun's flags; every flag of vLLM's
// benchmark_serving_multi_turn.py is accepted with vLLM's meaning
// (vllmFlags declares those mtkit has only under vLLM's name).
func newApp(s command.Streams) *cli.App {
	app := command.NewApp("mtrun", "replay multi-turn conversations against an OpenAI-compatible server", s)
	app.ArgsUsage = "[conversations.jsonl | vllm-list.json | generate_conversations.json | -]"
	app.Description = `Reads conversations (JSONL, vLLM's JSON list, or a generate_conversations
config to generate from) from FILE or stdin, replays them with the full
history each turn, and writes one JSON record per request to stdout (or
--records FILE, .jsonl[.gz|.zst] or .parquet). Flags go before FILE.

Closed loop (default): --clients users, each alternating between its share
of --active conversations, one request in flight per user (vLLM's model).
Open loop: --rate N starts N new conversations per second on an absolute
Poisson (or --arrival constant) schedule; each conversation is its own user.
--request-rate R is vLLM's: an exponential pause of mean 1/R seconds
before each turn, per user (a think time, not an arrival rate).`
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "input-file", Aliases: []string{"i"}, Usage: "conversations `FILE` (or the positional argument; - is stdin)"},
		&cli.StringFlag{Name: "url", Aliases: []string{"u"}, Value: "http://localhost:8000", EnvVars: []string{"OPENAI_BASE_URL"}, Usage: "server base `URL` (with or without /v1)"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model `NAME` sent in requests (default: the first id of /v1/models); as in vLLM, also the tokenizer when it is a model directory here and --tokenizer is not set"},
		&cli.StringFlag{Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Usage: "bearer `KEY` (never written to records or logs)"},
		&cli.StringSliceFlag{Name: "header", Usage: "extra request header `\"Name: value\"` (repeatable)"},
		&cli.StringFlag{Name: "extra-body", Usage: "`JSON` object merged into every request body"},
		&cli.StringFlag{Name: "api", Value: "chat", Usage: "endpoint: chat (/v1/chat/completions) or completions (/v1/completions, history joined as text)"},
		&cli.BoolFlag{Name: "no-stream", Usage: "non-streaming requests"},
		&cli.BoolFlag{Name: "no-usage", Usage: "do not ask for stream_options.include_usage"},
		&cli.BoolFlag{Name: "continuous-usage-stats", Usage: "ask for usage on every chunk"},
		&cli.BoolFlag{Name: "max-completion-tokens", Usage: "send max_completion_tokens instead of max_tokens"},
		&cli.Float64Flag{Name: "temperature", Usage: "sampling temperature `T` (default: server's)"},
		&cli.Int64Flag{Name: "seed", Usage: "seed of mtrun's own random choices (vLLM's meaning)"},
		&cli.Int64Flag{Name: "request-seed", Usage: "send seed `N` in every request"},
		&cli.BoolFlag{Name: "ignore-eos", Usage: "send ignore_eos=true"},
		&cli.IntFlag{Name: "choices", Value: 1, Usage: "OpenAI's n: choices per request (parallel sampling), each recorded; the history continues with choice 0 (-n is vLLM's --max-num-requests)"},
		&cli.BoolFlag{Name: "send-conversation-id", Usage: "send the conversation id both as a top-level conversation_id field and an X-Session-ID header"},
		&cli.BoolFlag{Name: "conversation-id-field", Usage: "send the top-level conversation_id field"},
		&cli.BoolFlag{Name: "session-id-header", Usage: "send the X-Session-ID header"},
		&cli.StringSliceFlag{Name: "session-header", Usage: "send `\"Name: template\"` with every request of a session; the template may hold {conversation_id}, {run_id} and {user} (repeatable)"},
		&cli.StringSliceFlag{Name: "session-token-header", Usage: "send back the value of the response header `NAME` (a router's session token) with the session's later requests (repeatable)"},
		&cli.BoolFlag{Name: "session-cookies", Usage: "keep each session's cookies (Set-Cookie, e.g. llm-d's session cookie) and send them with its later requests"},
		&cli.StringFlag{Name: "backend-header", Usage: "record the response header `NAME` (the replica a router chose, e.g. x-envoy-upstream-host) as each record's backend"},
		&cli.StringFlag{Name: "reasoning-in-history", Value: "drop", Usage: "`MODE` keep or drop: whether the answers' reasoning text goes back in the history of later turns"},
		&cli.BoolFlag{Name: "keep-reasoning", Hidden: true, Usage: "old spelling of --reasoning-in-history keep"},
		&cli.StringFlag{Name: "tool-choice", Usage: "send tool_choice `CHOICE` (auto, required, none, or a function name) with requests that offer tools"},
		&cli.StringFlag{Name: "tokenizer", Value: "o200k_base", Usage: "client tokenizer `SPEC`: tokenizer.json, model dir, built-in name, or none"},

		&cli.IntFlag{Name: "clients", Aliases: []string{"p", "num-clients"}, Value: 1, Usage: "closed loop: concurrent users"},
		&cli.IntFlag{Name: "active", Aliases: []string{"k", "max-active-conversations"}, Usage: "closed loop: active conversations in total, spread over the users (default: --clients)"},
		&cli.StringFlag{Name: "conversation-sampling", Value: "round_robin", Usage: "which active conversation a user serves next: round_robin or random"},
		&cli.Float64Flag{Name: "rate", Usage: "open loop: new conversations per second"},
		&cli.StringFlag{Name: "arrival", Value: "poisson", Usage: "open-loop arrivals: poisson or constant"},
		&cli.IntFlag{Name: "max-concurrency", Usage: "open loop: cap on conversations in progress (0: none)"},
		&cli.StringFlag{Name: "think-time", Usage: "think time `DIST` before each turn after the first: file (the default: the file's think_time_ms), none, or a distribution such as constant:2s, uniform:1s:5s, exponential:mean=3s, lognormal:average=2s,max=30s"},
		&cli.Float64Flag{Name: "request-rate", Usage: "vLLM's per-user rate: exponential think time with mean 1/`R` s"},
		&cli.BoolFlag{Name: "loop", Usage: "recycle conversations (fresh ids) until --duration or --max-requests"},

		&cli.IntFlag{Name: "max-requests", Aliases: []string{"n", "max-num-requests"}, Usage: "stop after `N` requests"},
		&cli.DurationFlag{Name: "duration", Usage: "stop starting turns after `D`"},
		&cli.IntFlag{Name: "max-user-turns", Usage: "user turns per conversation (0: all)"},
		&cli.IntFlag{Name: "warmup-turns", Usage: "the first `N` requests are recorded with phase=warmup"},
		&cli.BoolFlag{Name: "warmup-step", Usage: "vLLM's warmup: send the first turn of every conversation first, recorded as phase=warmup"},

		&cli.IntFlag{Name: "max-tokens", Usage: "fixed max_tokens for every turn (default: the dataset's target)"},
		&cli.IntFlag{Name: "clamp-min-tokens", Usage: "raise each turn's output target to at least `N`"},
		&cli.IntFlag{Name: "clamp-max-tokens", Usage: "cap each turn's output target at `N`"},
		&cli.BoolFlag{Name: "min-tokens", Usage: "also send min_tokens = max_tokens (vLLM, SGLang)"},
		&cli.IntFlag{Name: "max-model-len", Usage: "context guard: drop the oldest turns so prompt + max_tokens fits `N` (default: the server's max_model_len)"},

		&cli.IntFlag{Name: "max-retries", Value: replay.DefaultMaxRetries, EnvVars: []string{"MULTITURN_BENCH_MAX_RETRIES"}, Usage: "retries on connection errors, 429 and 5xx"},
		&cli.StringFlag{Name: "on-failure", Value: "continue", Usage: "after the last retry: continue (next turn, from the last good context) or abandon the conversation"},
		&cli.Float64Flag{Name: "request-timeout", Value: 600, Usage: "per-request timeout in `SECONDS`"},
		&cli.DurationFlag{Name: "term-grace", Value: command.DefaultTermGrace, Usage: "after SIGTERM, cancel the requests still in flight after `DURATION` (recorded as canceled)"},
		&cli.BoolFlag{Name: "verify-output", Usage: "compare answers with the dataset's and record mismatches"},
		&cli.BoolFlag{Name: "print-content", Usage: "print prompts and answers to stderr"},

		&cli.StringFlag{Name: "records", Value: "-", Usage: "records `FILE`: - (stdout, JSONL), *.jsonl[.gz|.zst], *.parquet (a directory of Parquet parts)"},
		&cli.StringFlag{Name: "output-file", Aliases: []string{"o"}, Usage: "write the conversations with the model's real answers to `FILE` (*.json: a JSON list, as vLLM writes)"},
		&cli.StringFlag{Name: "manifest", Usage: "run manifest `FILE` (default: next to --records FILE)"},
		&cli.StringFlag{Name: "run-id", Usage: "run id written in every record (default: time + random)"},
		&cli.IntFlag{Name: "shard", Usage: "shard number written in every record"},
		&cli.BoolFlag{Name: "sim", Usage: "start the built-in simulator on 127.0.0.1 and run against it"},
		&cli.StringFlag{Name: "sim-config", Value: "preset=realistic", Usage: "simulator `SPEC`, e.g. preset=zero or ttft=30ms,decode=5ms,cache=200000 (see mtsim --help)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no summary on stderr"},
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of mtrun itself to `FILE` (go tool pprof)"},

		// Schedules beyond the closed and open loops (schedule.go).
		&cli.IntFlag{Name: "users", Usage: "user-centric timing: `N` users, each sending a turn every --user-gap, staggered by gap/N, one conversation at a time (excludes --rate and --clients)"},
		&cli.DurationFlag{Name: "user-gap", Usage: "user-centric timing: time `D` between the turns of a user (a turn not ready then goes when its previous answer ends, recorded as lateness)"},
		&cli.Float64Flag{Name: "time-scale", Usage: "trace clock of a timed input: multiply the trace's times by `F` (0.1 replays ten times faster)"},

		// Server metrics (metrics.go, docs/mtrun.md "Server metrics").
		&cli.StringSliceFlag{Name: "metrics-url", Usage: "scrape this Prometheus `URL` during the run (repeatable: one per replica; default: the server's /metrics when it answers in the Prometheus format)"},
		&cli.DurationFlag{Name: "metrics-interval", Value: metrics.DefaultInterval, Usage: "time `D` between two scrapes"},
		&cli.StringFlag{Name: "metrics-file", Usage: "series `FILE` (default: next to --records FILE, *.metrics.jsonl)"},
		&cli.BoolFlag{Name: "no-metrics", Usage: "do not scrape the server's metrics"},
		&cli.StringFlag{Name: "input-format", Usage: "read the input as `FORMAT` instead of detecting it: conversations, vllm, sharegpt, openai, generate or a trace format (an unknown FORMAT lists them all; docs/mtrun.md, \"Inputs\")"},
		debugFlag(), // hidden: debug.go
	}
	app.Flags = append(app.Flags, scaleFlags()...)    // segment.go: --segment, --segments, --start-at
	app.Flags = append(app.Flags, stageFlagList()...) // stages.go
	app.Flags = append(app.Flags, vllmFlags()...)
	app.Action = func(c *cli.Context) error {
		opts, err := optionsFrom(c)
		if err != nil {
			return err
		}
		// No secret reaches stderr, whatever the server sends.
		red := replay.NewRedactor(&opts.replay)
		s := s
		s.Err = red.Writer(s.Err)
		for _, w := range opts.warnings {
			fmt.Fprintf(s.Err, "mtrun: warning: %s\n", w)
		}
		return red.Error(run(c.Context, opts, s))
	}
	return app
}
