package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/mtrun"
	"github.com/mtkit/mtkit/internal/replay"
)

// runFunc runs mtrun with its parsed options: mtrun.Run, or a test's
// stand-in that checks them (the seam of gh's runF).
type runFunc func(ctx context.Context, o *mtrun.Options, s command.Streams) error

// values are the flags' destinations: the fields of mtrun.Flags, and the
// repeatable flags' lists, copied into them once parsed.
type values struct {
	mtrun.Flags
	headers, sessionHeaders, sessionTokens, metricsURLs cli.StringSlice
}

// newApp declares mtrun's flags and calls runF with the options they
// give; every flag of vLLM's benchmark_serving_multi_turn.py is accepted
// with vLLM's meaning (vllmFlags declares those mtkit has only under
// vLLM's name).
func newApp(s command.Streams, runF runFunc) *cli.App {
	app := command.NewApp("mtrun", "replay multi-turn conversations against an OpenAI-compatible server", s)
	app.ArgsUsage = "[FILE | -]"
	app.Description = description
	v := &values{}
	app.Flags = v.flags()
	app.Action = func(c *cli.Context) error {
		v.Given = cliflag.Given(c, app.Flags)
		v.FirstGiven = func(dsts ...any) string { return cliflag.FirstGiven(c, app.Flags, dsts...) }
		v.Headers, v.SessionHeaders, v.SessionTokens, v.MetricsURLs = v.headers.Value(), v.sessionHeaders.Value(), v.sessionTokens.Value(), v.metricsURLs.Value()
		opts, err := v.Options(c.Args().Slice(), command.Args(c))
		if err != nil {
			return err
		}
		// No secret reaches stderr, whatever the server sends.
		red := replay.NewRedactor(&opts.Replay)
		s := s
		s.Err = red.Writer(s.Err)
		for _, w := range opts.Warnings {
			fmt.Fprintf(s.Err, "mtrun: warning: %s\n", w)
		}
		return red.Error(runF(c.Context, opts, s))
	}
	return app
}

// parseOptions returns the options the command line args (args[0] is
// the program name) gives, checked, without running anything: the seam
// the tests of the command-line wiring use. A usage error comes back as
// a *command.ExitError holding what mtrun would print.
func parseOptions(args []string) (*mtrun.Options, error) {
	var errb strings.Builder
	var got *mtrun.Options
	app := newApp(command.Streams{In: strings.NewReader(""), Out: io.Discard, Err: &errb}, func(_ context.Context, o *mtrun.Options, _ command.Streams) error {
		got = o
		return nil
	})
	if code := command.Run(context.Background(), app, args); code != command.ExitOK || got == nil {
		return nil, command.Exit(code, errors.New(strings.TrimSpace(errb.String())))
	}
	return got, nil
}

const description = `Reads sessions from FILE or stdin: mtkit conversations (JSONL), vLLM's JSON
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

// flags declares mtrun's flags, grouped as --help shows them, each bound
// to its field of v.
func (v *values) flags() []cli.Flag {
	v.RequestTimeout, v.TermGrace, v.MetricsInterval = replay.DefaultRequestTimeout, command.DefaultTermGrace, metrics.DefaultInterval
	v.StageDuration, v.StageWarmup = 30*time.Second, 5*time.Second
	const (
		server, load, limits, tokens = cliflag.CatServer, cliflag.CatLoad, cliflag.CatLimits, cliflag.CatTokens
		failures, output, run        = cliflag.CatFailures, cliflag.CatOutput, cliflag.CatRun
		catMetrics                   = cliflag.CatMetrics
	)
	cat := func(c string, f *cli.GenericFlag) *cli.GenericFlag { f.Category = c; return f }
	flags := []cli.Flag{
		&cli.StringFlag{Name: "input-file", Aliases: []string{"i"}, Destination: &v.Input, Category: cliflag.CatInput, Usage: "conversations `FILE` (or the positional argument; - is stdin)"},
		cliflag.InputFormat(&v.InputFormat),
		cliflag.Config(&v.Config), // internal/mtrun/config.go
		cliflag.Tokenizer(&v.Tokenizer, "o200k_base"),

		&cli.StringFlag{Name: "url", Aliases: []string{"u"}, Value: "http://localhost:8000", EnvVars: []string{"OPENAI_BASE_URL"}, Destination: &v.URL, Category: server, Usage: "server base `URL` (with or without /v1)"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, DefaultText: "the first id of /v1/models", Destination: &v.Model, Category: server, Usage: "model `NAME` sent in requests; as in vLLM, also the tokenizer when it is a model directory here and --tokenizer is not set"},
		&cli.StringFlag{Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Destination: &v.APIKey, Category: server, Usage: "bearer `KEY` (never written to records or logs)"},
		&cli.StringSliceFlag{Name: "header", Destination: &v.headers, Category: server, Usage: "extra request header `\"Name: value\"` (repeatable)"},
		&cli.StringFlag{Name: "extra-body", Destination: &v.ExtraBody, Category: server, Usage: "`JSON` object merged into every request body"},
		&cli.StringFlag{Name: "api", Value: "chat", Destination: &v.API, Category: server, Usage: "`ENDPOINT`: chat (/v1/chat/completions) or completions (/v1/completions, history joined as text)"},
		&cli.BoolFlag{Name: "no-stream", Destination: &v.NoStream, Category: server, Usage: "non-streaming requests"},
		&cli.BoolFlag{Name: "no-usage", Destination: &v.NoUsage, Category: server, Usage: "do not ask for stream_options.include_usage"},
		&cli.BoolFlag{Name: "continuous-usage-stats", Destination: &v.ContinuousUsage, Category: server, Usage: "ask for usage on every chunk"},
		&cli.BoolFlag{Name: "max-completion-tokens", Destination: &v.MaxCompField, Category: server, Usage: "send max_completion_tokens instead of max_tokens"},
		&cli.Float64Flag{Name: "temperature", DefaultText: "the server's", Destination: &v.Temperature, Category: server, Usage: "sampling temperature `T`"},
		&cli.Int64Flag{Name: "request-seed", DefaultText: "not sent", Destination: &v.RequestSeed, Category: server, Usage: "send seed `N` in every request (the server's sampling seed; --seed is mtrun's own)"},
		&cli.BoolFlag{Name: "ignore-eos", Destination: &v.IgnoreEOS, Category: server, Usage: "send ignore_eos=true"},
		&cli.IntFlag{Name: "choices", Value: 1, Destination: &v.Choices, Category: server, Usage: "OpenAI's n: `N` choices per request (parallel sampling), each recorded; the history continues with choice 0 (-n is --max-requests)"},
		&cli.BoolFlag{Name: "send-conversation-id", Destination: &v.SendConvID, Category: server, Usage: "send the conversation id both as a top-level conversation_id field and an X-Session-ID header"},
		&cli.BoolFlag{Name: "conversation-id-field", Destination: &v.ConvIDField, Category: server, Usage: "send the top-level conversation_id field"},
		&cli.BoolFlag{Name: "session-id-header", Destination: &v.SessionIDHeader, Category: server, Usage: "send the X-Session-ID header"},
		&cli.StringSliceFlag{Name: "session-header", Destination: &v.sessionHeaders, Category: server, Usage: "send `\"Name: template\"` with every request of a session; the template may hold {conversation_id}, {run_id} and {user} (repeatable)"},
		&cli.StringSliceFlag{Name: "session-token-header", Destination: &v.sessionTokens, Category: server, Usage: "send back the value of the response header `NAME` (a router's session token) with the session's later requests (repeatable)"},
		&cli.BoolFlag{Name: "session-cookies", Destination: &v.SessionCookies, Category: server, Usage: "keep each session's cookies (Set-Cookie, e.g. llm-d's session cookie) and send them with its later requests"},
		&cli.StringFlag{Name: "backend-header", Destination: &v.BackendHeader, Category: server, Usage: "record the response header `NAME` (the replica a router chose, e.g. x-envoy-upstream-host) as each record's backend"},
		&cli.StringFlag{Name: "reasoning-in-history", Value: "drop", Destination: &v.Reasoning, Category: server, Usage: "`MODE` keep or drop: whether the answers' reasoning text goes back in the history of later requests"},
		&cli.StringFlag{Name: "tool-choice", Destination: &v.ToolChoice, Category: server, Usage: "send tool_choice `CHOICE` (auto, required, none, or a function name) with requests that offer tools"},

		&cli.IntFlag{Name: "clients", Aliases: []string{"p", "num-clients"}, Value: 1, Destination: &v.Clients, Category: load, Usage: "closed loop: `N` concurrent users"},
		&cli.IntFlag{Name: "active", Aliases: []string{"k", "max-active-conversations"}, DefaultText: "--clients", Destination: &v.Active, Category: load, Usage: "closed loop: `N` active conversations in total, spread over the users"},
		&cli.StringFlag{Name: "conversation-sampling", Value: "round_robin", Destination: &v.Sampling, Category: load, Usage: "`ORDER` in which a user serves its active conversations: round_robin or random"},
		&cli.Float64Flag{Name: "rate", DefaultText: "closed loop", Destination: &v.Rate, Category: load, Usage: "open loop: `RATE` new conversations per second"},
		&cli.StringFlag{Name: "arrival", Value: "poisson", Destination: &v.Arrival, Category: load, Usage: "open-loop `ARRIVALS`: poisson or constant"},
		&cli.IntFlag{Name: "max-concurrency", DefaultText: "none", Destination: &v.MaxConcurrency, Category: load, Usage: "open loop: at most `N` conversations in progress"},
		cliflag.ThinkTime(&v.ThinkTime, "file: the input's think_time_ms"),
		&cli.Float64Flag{Name: "request-rate", DefaultText: "none", Destination: &v.RequestRate, Category: load, Usage: "vLLM's per-user rate: exponential think time with mean 1/`R` s"},
		&cli.BoolFlag{Name: "loop", Destination: &v.Loop, Category: load, Usage: "recycle conversations (fresh ids) until --duration or --max-requests"},
		&cli.IntFlag{Name: "users", Destination: &v.Users, Category: load, Usage: "user-centric timing: `N` users, each sending a request (user turn) every --user-gap, staggered by gap/N, one conversation at a time (excludes --rate and --clients)"},
		cat(load, cliflag.Duration("user-gap", &v.UserGap, "user-centric timing: time `GAP` between the requests (user turns) of a user (a request not ready then goes when its previous answer ends, recorded as client wait)")),
		&cli.Float64Flag{Name: "time-scale", DefaultText: "1", Destination: &v.TimeScale, Category: load, Usage: "trace clock of a timed input: multiply the trace's times by `F` (0.1 replays ten times faster)"},

		&cli.IntFlag{Name: "max-requests", Aliases: []string{"n", "max-num-requests"}, DefaultText: "all", Destination: &v.MaxRequests, Category: limits, Usage: "stop after `N` requests"},
		cat(limits, cliflag.Duration("duration", &v.Duration, "send no new request (user turn) after `DURATION`")),
		cliflag.MaxTurns(&v.MaxTurns),
		&cli.IntFlag{Name: "max-user-turns", DefaultText: "all", Destination: &v.MaxUserTurns, Category: limits, Usage: "replay the first `N` user turns of each conversation (--max-turns counts messages)"},
		&cli.IntFlag{Name: "warmup-turns", Destination: &v.WarmupTurns, Category: limits, Usage: "the first `N` requests (user turns) are recorded with phase=warmup"},
		&cli.BoolFlag{Name: "warmup-step", Destination: &v.WarmupStep, Category: limits, Usage: "vLLM's warmup: send the first request (user turn) of every conversation first, recorded as phase=warmup"},

		&cli.IntFlag{Name: "max-tokens", DefaultText: "the dataset's target", Destination: &v.MaxTokens, Category: tokens, Usage: "send max_tokens `N` in every request"},
		&cli.IntFlag{Name: "clamp-min-tokens", DefaultText: "none", Destination: &v.ClampMin, Category: tokens, Usage: "raise each request's output target to at least `N`"},
		&cli.IntFlag{Name: "clamp-max-tokens", DefaultText: "none", Destination: &v.ClampMax, Category: tokens, Usage: "cap each request's output target at `N`"},
		&cli.BoolFlag{Name: "min-tokens", Destination: &v.MinTokens, Category: tokens, Usage: "also send min_tokens = max_tokens (vLLM, SGLang)"},
		&cli.IntFlag{Name: "max-model-len", DefaultText: "the server's max_model_len", Destination: &v.MaxModelLen, Category: tokens, Usage: "context guard: drop the oldest messages so prompt + max_tokens fits `N`"},

		&cli.IntFlag{Name: "max-retries", Value: replay.DefaultMaxRetries, EnvVars: []string{"MULTITURN_BENCH_MAX_RETRIES"}, Destination: &v.MaxRetries, Category: failures, Usage: "`N` retries on connection errors, 429 and 5xx"},
		&cli.StringFlag{Name: "on-failure", Value: "continue", Destination: &v.OnFailure, Category: failures, Usage: "after the last retry, `ACTION`: continue (next user turn, from the last good context) or abandon the conversation"},
		cat(failures, cliflag.Duration("request-timeout", &v.RequestTimeout, "per-request `TIMEOUT`")),
		cat(failures, cliflag.Duration("term-grace", &v.TermGrace, "after SIGTERM, cancel the requests still in flight after `GRACE` (recorded as canceled)")),
		&cli.BoolFlag{Name: "verify-output", Destination: &v.Verify, Category: failures, Usage: "compare answers with the dataset's and record mismatches"},

		&cli.StringFlag{Name: "records", Value: "-", Destination: &v.Records, Category: output, Usage: "records `FILE`: - (stdout, JSONL), *.jsonl[.gz|.zst], *.parquet (a directory of Parquet parts)"},
		cliflag.Output(&v.Output, ""),
		&cli.StringFlag{Name: "manifest", DefaultText: "next to --records FILE", Destination: &v.Manifest, Category: output, Usage: "run manifest `FILE`"},
		&cli.StringFlag{Name: "run-id", DefaultText: "time + random", Destination: &v.RunID, Category: output, Usage: "run `ID` written in every record"},
		&cli.IntFlag{Name: "shard", Destination: &v.Shard, Category: output, Usage: "shard number `N` written in every record"},
		cliflag.Quiet(&v.Quiet),
		&cli.BoolFlag{Name: "print-content", Destination: &v.PrintContent, Category: output, Usage: "print prompts and answers to stderr"},
		&cli.StringFlag{Name: "cpuprofile", Destination: &v.CPUProfile, Category: output, Usage: "write a CPU profile of mtrun itself to `FILE` (go tool pprof)"},

		&cli.StringSliceFlag{Name: "metrics-url", DefaultText: "the server's /metrics when it answers in the Prometheus format", Destination: &v.metricsURLs, Category: catMetrics, Usage: "scrape this Prometheus `URL` during the run (repeatable: one per replica)"},
		cat(catMetrics, cliflag.Duration("metrics-interval", &v.MetricsInterval, "time `INTERVAL` between two scrapes")),
		cliflag.MetricsFile(&v.MetricsFile, "next to --records FILE, *.metrics.jsonl"),
		cliflag.NoMetrics(&v.NoMetrics),
		&cli.IntFlag{Name: "metrics-max-series", Value: metrics.DefaultMaxSeries, Destination: &v.MetricsMaxSeries, Category: catMetrics, Usage: "keep at most `N` series per scrape, besides the canonical ones (the rest are dropped and counted)"},
		&cli.Int64Flag{Name: "metrics-max-bytes", Value: metrics.DefaultMaxBytes, Destination: &v.MetricsMaxBytes, Category: catMetrics, Usage: "read at most `BYTES` of exposition per scrape"},

		cliflag.Seed(&v.Seed),
		&cli.BoolFlag{Name: "dry-run", Destination: &v.DryRun, Category: run, Usage: "print the plan derived from an inference-perf --config (sessions, stages, rates, server) and send nothing"},
		&cli.BoolFlag{Name: "sim", Destination: &v.Sim, Category: run, Usage: "start the built-in simulator on 127.0.0.1 and run against it"},
		&cli.StringFlag{Name: "sim-config", Value: "preset=realistic", Destination: &v.SimConfig, Category: run, Usage: "simulator `SPEC`, e.g. preset=zero or ttft=30ms,decode=5ms,cache=200000 (see mtsim --help)"},
		debugFlag(), // hidden: debug.go

		cliflag.BoolAlias("keep-reasoning", "reasoning-in-history", "keep", "use --reasoning-in-history keep"),
		cliflag.Alias("output-file", "output", ""), // vLLM's spelling
	}
	flags = append(append(append(flags, v.scaleFlags()...), v.stageFlags()...), v.vllmFlags()...)
	cliflag.NoBoolDefaults(flags)
	return flags
}

// scaleFlags are the flags of a run split over several processes
// (docs/scale-out.md).
func (v *values) scaleFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "segment", Destination: &v.Segment, Usage: "run part `i/N` of a run split over N processes (i from 0 to N-1): its own sessions, on the run's global schedule (docs/scale-out.md)"},
		&cli.IntFlag{Name: "segments", Destination: &v.Segments, Usage: "split the run over `N` processes, this one's index from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)"},
		&cli.StringFlag{Name: "start-at", Destination: &v.StartAt, Usage: "wait for the wall-clock `TIME` (RFC 3339, e.g. 2026-11-23T23:30:00Z) before the first request; refuse when more than 1s late"},
	}
	cliflag.SetCategory("Scale-out (docs/scale-out.md):", flags)
	return flags
}

// stageFlags are the flags of staged runs and sweeps.
func (v *values) stageFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "stages", Destination: &v.Stages, Usage: "several load levels in one run, without draining between them: `LIST` of KIND=LEVEL:DURATION[:WARMUP], KIND clients, users (with --user-gap), rate, or active (conversations shared by --clients) (one kind per run), e.g. clients=4:60s,clients=8:60s:10s"},
		&cli.StringFlag{Name: "sweep", Destination: &v.Sweep, Usage: "search the load levels of `KIND` (clients, users with --user-gap, or rate): ramp up by 2 from --sweep-start until a stage does not hold or saturates, then bisect (with --slo) or fill below the knee; one replay per stage. active: the conversations shared by --clients grow until their working set falls out of the server's cache"},
		&cli.Float64Flag{Name: "sweep-start", Value: 1, Destination: &v.SweepStart, Usage: "first level `N` of --sweep"},
		&cli.Float64Flag{Name: "sweep-max", Destination: &v.SweepMax, Usage: "highest level `N` --sweep tries (0: no limit)"},
		&cli.IntFlag{Name: "sweep-stages", Value: 12, Destination: &v.SweepStages, Usage: "at most `N` stages in a --sweep"},
		cliflag.Duration("stage-duration", &v.StageDuration, "length `DURATION` of each --sweep stage, warmup included"),
		cliflag.Duration("stage-warmup", &v.StageWarmup, "`WARMUP` at the start of each --sweep stage (recorded with phase warmup, not judged)"),
		&cli.Float64Flag{Name: "sweep-unsteady", Value: 0.15, Destination: &v.SweepUnsteady, Usage: "a --sweep stage is steady when the throughputs of its two halves differ by at most `F` of their mean"},
		cliflag.SLO(&v.SLO),
		cliflag.Capacity(&v.Capacity),
	}
}

// vllmFlags are the flags of vLLM's benchmarks/multi_turn/
// benchmark_serving_multi_turn.py that mtrun has under vLLM's name only,
// with vLLM's meaning (where mtkit had a flag of the same name with
// another meaning, mtkit's is now under the name given in the usage).
// The flags both share with the same meaning are declared in flags.
func (v *values) vllmFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "served-model-name", DefaultText: "--model", Destination: &v.ServedModel, Usage: "the model `NAME` sent in requests"},
		&cli.IntFlag{Name: "limit-min-tokens", DefaultText: "not sent", Destination: &v.LimitMin, Usage: "send min_tokens `N`; 0: the dataset answer's length, -1: none (--clamp-min-tokens bounds the dataset's target instead)"},
		&cli.IntFlag{Name: "limit-max-tokens", DefaultText: "not sent", Destination: &v.LimitMax, Usage: "send max_tokens `N`; 0: the dataset answer's length, -1: none (--clamp-max-tokens bounds the dataset's target instead)"},
		cliflag.Duration("request-timeout-sec", &v.VLLMRequestTimeout, "per-request `TIMEOUT`, raised to 0.2 s per max_tokens for long answers (--request-timeout is fixed)"),
		&cli.BoolFlag{Name: "excel-output", Aliases: []string{"e"}, Destination: &v.Excel, Usage: "write statistics_<clients>_clients__<time>.xlsx (sheets Summary and Raw data, vLLM's columns)"},
		&cli.StringFlag{Name: "stats-json-output", Destination: &v.StatsJSON, Usage: "write the per-request statistics (ttft_ms, tpot_ms, ...) as a JSON list to `FILE`"},
		cliflag.WarmupPercentages(&v.WarmupPct, "0%"),
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Destination: &v.Verbose, Usage: "one line per request on stderr, and time_between_user_turns_sec in the workbook"},
		&cli.BoolFlag{Name: "no-early-stop", Destination: &v.NoEarlyStop, Usage: "do not stop when one client is done; mtrun never stops early, so this changes nothing"},
		&cli.BoolFlag{Name: "trust-remote-code", Destination: &v.TrustRemoteCode, Usage: "accepted for vLLM command lines; mtrun runs no tokenizer code"},
	}
	cliflag.SetCategory(cliflag.CatVLLM, flags)
	return flags
}
