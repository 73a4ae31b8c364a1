package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/replay"
)

// runFunc runs mtrun with its parsed options: run, or a test's
// stand-in that checks them (the seam of gh's runF).
type runFunc func(ctx context.Context, o *options, s command.Streams) error

// newApp declares mtrun's flags and calls runF with the options they
// give; every flag of vLLM's benchmark_serving_multi_turn.py is accepted
// with vLLM's meaning (vllmFlags declares those mtkit has only under
// vLLM's name).
func newApp(s command.Streams, runF runFunc) *cli.App {
	app := command.NewApp("mtrun", "replay multi-turn conversations against an OpenAI-compatible server", s)
	app.ArgsUsage = "[FILE | -]"
	app.Description = `Reads sessions from FILE or stdin: mtkit conversations (JSONL), vLLM's JSON
list or generate_conversations config, ShareGPT or OpenAI datasets
(converted as mtconvert would), or a production trace (Mooncake, Bailian,
BurstGPT, Azure), detected from the content or named with --input-format.
Replays them with the full history each turn and writes one JSON record per
request to stdout (or --records FILE, .jsonl[.gz|.zst] or .parquet).
Options may come before or after FILE; "--" ends them.

Closed loop (default): --clients users, each alternating between its share
of --active conversations, one request in flight per user (vLLM's model).
Open loop: --rate N starts N new conversations per second on an absolute
Poisson (or --arrival constant) schedule; each conversation is its own user.
--request-rate R is vLLM's: an exponential pause of mean 1/R seconds
before each turn, per user (a think time, not an arrival rate).
User-centric: --users N --user-gap D, each user sending a turn every D.
Traces replay on their own clock (--time-scale F). --stages runs several
load levels in one run; --sweep --slo searches for the capacity.

Durations take Go units (500ms, 2s, 1m30s); a bare number is seconds.
-o FILE.json writes the conversations as one JSON list, as vLLM does.`
	var v flagValues
	app.Flags = append(append(append(flags(&v), scaleFlags()...), stageFlagList()...), vllmFlags(&v)...) // segment.go: --segment, --segments, --start-at; stages.go
	cliflag.NoBoolDefaults(app.Flags)
	app.Action = func(c *cli.Context) error {
		opts, err := optionsFrom(c, &v)
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
		return red.Error(runF(c.Context, opts, s))
	}
	return app
}

// flagValues are the flags whose types cli.Context has no getter for
// (cliflag's seeds and durations), bound here.
type flagValues struct {
	seed                                uint64
	duration, requestTimeout, termGrace time.Duration
	vllmRequestTimeout, metricsInterval time.Duration
}

// flags are mtrun's own flags, grouped as --help shows them.
func flags(v *flagValues) []cli.Flag {
	v.requestTimeout, v.termGrace, v.metricsInterval = replay.DefaultRequestTimeout, command.DefaultTermGrace, metrics.DefaultInterval
	const (
		server, load, limits, tokens = cliflag.CatServer, cliflag.CatLoad, cliflag.CatLimits, cliflag.CatTokens
		failures, output, run        = cliflag.CatFailures, cliflag.CatOutput, cliflag.CatRun
	)
	tokenizer := cliflag.Tokenizer(nil, "o200k_base")
	duration := cliflag.Duration("duration", &v.duration, "stop starting turns after `DURATION`")
	duration.Category = limits
	requestTimeout := cliflag.Duration("request-timeout", &v.requestTimeout, "per-request `TIMEOUT`")
	termGrace := cliflag.Duration("term-grace", &v.termGrace, "after SIGTERM, cancel the requests still in flight after `GRACE` (recorded as canceled)")
	requestTimeout.Category, termGrace.Category = failures, failures
	thinkTime := cliflag.ThinkTime(nil, "file: the input's think_time_ms")
	userGap := cliflag.Duration("user-gap", nil, "user-centric timing: time `GAP` between the turns of a user (a turn not ready then goes when its previous answer ends, recorded as lateness)")
	userGap.Category = load
	seed := cliflag.Seed(&v.seed)
	const catMetrics = cliflag.CatMetrics
	metricsInterval := cliflag.Duration("metrics-interval", &v.metricsInterval, "time `INTERVAL` between two scrapes")
	metricsInterval.Category = catMetrics
	return []cli.Flag{
		&cli.StringFlag{Name: "input-file", Aliases: []string{"i"}, Category: cliflag.CatInput, Usage: "conversations `FILE` (or the positional argument; - is stdin)"},
		cliflag.InputFormat(nil),
		tokenizer,

		&cli.StringFlag{Name: "url", Aliases: []string{"u"}, Value: "http://localhost:8000", EnvVars: []string{"OPENAI_BASE_URL"}, Category: server, Usage: "server base `URL` (with or without /v1)"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, DefaultText: "the first id of /v1/models", Category: server, Usage: "model `NAME` sent in requests; as in vLLM, also the tokenizer when it is a model directory here and --tokenizer is not set"},
		&cli.StringFlag{Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Category: server, Usage: "bearer `KEY` (never written to records or logs)"},
		&cli.StringSliceFlag{Name: "header", Category: server, Usage: "extra request header `\"Name: value\"` (repeatable)"},
		&cli.StringFlag{Name: "extra-body", Category: server, Usage: "`JSON` object merged into every request body"},
		&cli.StringFlag{Name: "api", Value: "chat", Category: server, Usage: "`ENDPOINT`: chat (/v1/chat/completions) or completions (/v1/completions, history joined as text)"},
		&cli.BoolFlag{Name: "no-stream", Category: server, Usage: "non-streaming requests"},
		&cli.BoolFlag{Name: "no-usage", Category: server, Usage: "do not ask for stream_options.include_usage"},
		&cli.BoolFlag{Name: "continuous-usage-stats", Category: server, Usage: "ask for usage on every chunk"},
		&cli.BoolFlag{Name: "max-completion-tokens", Category: server, Usage: "send max_completion_tokens instead of max_tokens"},
		&cli.Float64Flag{Name: "temperature", DefaultText: "the server's", Category: server, Usage: "sampling temperature `T`"},
		&cli.Int64Flag{Name: "request-seed", DefaultText: "not sent", Category: server, Usage: "send seed `N` in every request (the server's sampling seed; --seed is mtrun's own)"},
		&cli.BoolFlag{Name: "ignore-eos", Category: server, Usage: "send ignore_eos=true"},
		&cli.IntFlag{Name: "choices", Value: 1, Category: server, Usage: "OpenAI's n: `N` choices per request (parallel sampling), each recorded; the history continues with choice 0 (-n is --max-requests)"},
		&cli.BoolFlag{Name: "send-conversation-id", Category: server, Usage: "send the conversation id both as a top-level conversation_id field and an X-Session-ID header"},
		&cli.BoolFlag{Name: "conversation-id-field", Category: server, Usage: "send the top-level conversation_id field"},
		&cli.BoolFlag{Name: "session-id-header", Category: server, Usage: "send the X-Session-ID header"},
		&cli.StringSliceFlag{Name: "session-header", Category: server, Usage: "send `\"Name: template\"` with every request of a session; the template may hold {conversation_id}, {run_id} and {user} (repeatable)"},
		&cli.StringSliceFlag{Name: "session-token-header", Category: server, Usage: "send back the value of the response header `NAME` (a router's session token) with the session's later requests (repeatable)"},
		&cli.BoolFlag{Name: "session-cookies", Category: server, Usage: "keep each session's cookies (Set-Cookie, e.g. llm-d's session cookie) and send them with its later requests"},
		&cli.StringFlag{Name: "backend-header", Category: server, Usage: "record the response header `NAME` (the replica a router chose, e.g. x-envoy-upstream-host) as each record's backend"},
		&cli.StringFlag{Name: "reasoning-in-history", Value: "drop", Category: server, Usage: "`MODE` keep or drop: whether the answers' reasoning text goes back in the history of later turns"},
		&cli.StringFlag{Name: "tool-choice", Category: server, Usage: "send tool_choice `CHOICE` (auto, required, none, or a function name) with requests that offer tools"},

		&cli.IntFlag{Name: "clients", Aliases: []string{"p", "num-clients"}, Value: 1, Category: load, Usage: "closed loop: `N` concurrent users"},
		&cli.IntFlag{Name: "active", Aliases: []string{"k", "max-active-conversations"}, DefaultText: "--clients", Category: load, Usage: "closed loop: `N` active conversations in total, spread over the users"},
		&cli.StringFlag{Name: "conversation-sampling", Value: "round_robin", Category: load, Usage: "`ORDER` in which a user serves its active conversations: round_robin or random"},
		&cli.Float64Flag{Name: "rate", DefaultText: "closed loop", Category: load, Usage: "open loop: `RATE` new conversations per second"},
		&cli.StringFlag{Name: "arrival", Value: "poisson", Category: load, Usage: "open-loop `ARRIVALS`: poisson or constant"},
		&cli.IntFlag{Name: "max-concurrency", DefaultText: "none", Category: load, Usage: "open loop: at most `N` conversations in progress"},
		thinkTime,
		&cli.Float64Flag{Name: "request-rate", DefaultText: "none", Category: load, Usage: "vLLM's per-user rate: exponential think time with mean 1/`R` s"},
		&cli.BoolFlag{Name: "loop", Category: load, Usage: "recycle conversations (fresh ids) until --duration or --max-requests"},
		&cli.IntFlag{Name: "users", Category: load, Usage: "user-centric timing: `N` users, each sending a turn every --user-gap, staggered by gap/N, one conversation at a time (excludes --rate and --clients)"},
		userGap,
		&cli.Float64Flag{Name: "time-scale", DefaultText: "1", Category: load, Usage: "trace clock of a timed input: multiply the trace's times by `F` (0.1 replays ten times faster)"},

		&cli.IntFlag{Name: "max-requests", Aliases: []string{"n", "max-num-requests"}, DefaultText: "all", Category: limits, Usage: "stop after `N` requests"},
		duration,
		cliflag.MaxTurns(nil),
		&cli.IntFlag{Name: "max-user-turns", DefaultText: "all", Category: limits, Usage: "replay the first `N` user turns of each conversation (--max-turns counts messages)"},
		&cli.IntFlag{Name: "warmup-turns", Category: limits, Usage: "the first `N` requests are recorded with phase=warmup"},
		&cli.BoolFlag{Name: "warmup-step", Category: limits, Usage: "vLLM's warmup: send the first turn of every conversation first, recorded as phase=warmup"},

		&cli.IntFlag{Name: "max-tokens", DefaultText: "the dataset's target", Category: tokens, Usage: "send max_tokens `N` in every request"},
		&cli.IntFlag{Name: "clamp-min-tokens", DefaultText: "none", Category: tokens, Usage: "raise each turn's output target to at least `N`"},
		&cli.IntFlag{Name: "clamp-max-tokens", DefaultText: "none", Category: tokens, Usage: "cap each turn's output target at `N`"},
		&cli.BoolFlag{Name: "min-tokens", Category: tokens, Usage: "also send min_tokens = max_tokens (vLLM, SGLang)"},
		&cli.IntFlag{Name: "max-model-len", DefaultText: "the server's max_model_len", Category: tokens, Usage: "context guard: drop the oldest turns so prompt + max_tokens fits `N`"},

		&cli.IntFlag{Name: "max-retries", Value: replay.DefaultMaxRetries, EnvVars: []string{"MULTITURN_BENCH_MAX_RETRIES"}, Category: failures, Usage: "`N` retries on connection errors, 429 and 5xx"},
		&cli.StringFlag{Name: "on-failure", Value: "continue", Category: failures, Usage: "after the last retry, `ACTION`: continue (next turn, from the last good context) or abandon the conversation"},
		requestTimeout,
		termGrace,
		&cli.BoolFlag{Name: "verify-output", Category: failures, Usage: "compare answers with the dataset's and record mismatches"},

		&cli.StringFlag{Name: "records", Value: "-", Category: output, Usage: "records `FILE`: - (stdout, JSONL), *.jsonl[.gz|.zst], *.parquet (a directory of Parquet parts)"},
		cliflag.Output(nil, ""),
		&cli.StringFlag{Name: "manifest", DefaultText: "next to --records FILE", Category: output, Usage: "run manifest `FILE`"},
		&cli.StringFlag{Name: "run-id", DefaultText: "time + random", Category: output, Usage: "run `ID` written in every record"},
		&cli.IntFlag{Name: "shard", Category: output, Usage: "shard number `N` written in every record"},
		cliflag.Quiet(nil),
		&cli.BoolFlag{Name: "print-content", Category: output, Usage: "print prompts and answers to stderr"},
		&cli.StringFlag{Name: "cpuprofile", Category: output, Usage: "write a CPU profile of mtrun itself to `FILE` (go tool pprof)"},

		&cli.StringSliceFlag{Name: "metrics-url", DefaultText: "the server's /metrics when it answers in the Prometheus format", Category: catMetrics, Usage: "scrape this Prometheus `URL` during the run (repeatable: one per replica)"},
		metricsInterval,
		cliflag.MetricsFile(nil, "next to --records FILE, *.metrics.jsonl"),
		cliflag.NoMetrics(nil),

		seed,
		&cli.BoolFlag{Name: "sim", Category: run, Usage: "start the built-in simulator on 127.0.0.1 and run against it"},
		&cli.StringFlag{Name: "sim-config", Value: "preset=realistic", Category: run, Usage: "simulator `SPEC`, e.g. preset=zero or ttft=30ms,decode=5ms,cache=200000 (see mtsim --help)"},
		debugFlag(), // hidden: debug.go

		cliflag.BoolAlias("keep-reasoning", "reasoning-in-history", "keep", "use --reasoning-in-history keep"),
		cliflag.Alias("output-file", "output", ""), // vLLM's spelling
	}
}
