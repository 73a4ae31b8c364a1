package mtrun

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/stagerun"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// Options are a run's settings, checked: Flags.Options builds them
// from the command line, Run runs them. Replay holds the replay's own;
// the exported fields are those cmd/mtrun and its tests of the wiring
// read or set.
type Options struct {
	Replay     replay.Options
	input      string
	inputFmt   string // --input-format; "" detects
	tokenizer  string
	records    string
	convOut    string
	manifest   string
	sim        bool
	simSpec    string
	warmupStep bool
	quiet      bool
	cpuprofile string
	termGrace  time.Duration
	args       []string            // command line, for the manifest (secrets redacted)
	VLLM       *vllmcompat.Outputs // vLLM's outputs (-e, --stats-json-output, --verbose); nil: none
	genSeed    *uint64             // --seed, for a generate_conversations input
	Warnings   []string            // for stderr, before the run
	// Timed is set when the input's format carries trace timestamps
	// (source.Format.Timed): the run then follows the trace clock unless
	// --rate, --users or --clients asks for another schedule.
	Timed   bool
	sched   scheduleFlags  // the load-shape flags (schedule.go)
	metrics metricsOptions // metrics.go
	Scale   ScaleOut       // segment.go
	Stage   StageSettings  // --stages, --sweep (stages.go)
	cfg     configFile     // --config, --dry-run (config.go)
	// replayRun, when set, replaces replay.Run: tests check the sweep
	// loop's wiring with it, without a server or a clock.
	replayRun stagerun.RunFunc
}

// Options checks the flags and turns them into the run's settings;
// positional are the arguments after the options, args the command line
// (for the manifest, its secrets redacted).
func (v *Flags) Options(positional, args []string) (*Options, error) {
	o := &Options{
		input: v.Input, inputFmt: v.InputFormat, tokenizer: v.Tokenizer, records: v.Records, convOut: v.Output,
		manifest: v.Manifest, sim: v.Sim, simSpec: v.SimConfig, warmupStep: v.WarmupStep, quiet: v.Quiet,
		cpuprofile: v.CPUProfile, termGrace: v.TermGrace, args: manifest.RedactArgs(args, argRedactions),
	}
	if o.inputFmt == "auto" {
		o.inputFmt = "" // detect
	}
	switch len(positional) {
	case 0:
	case 1:
		if o.input != "" {
			return nil, command.Usagef("give the input as --input-file or as an argument, not both")
		}
		o.input = positional[0]
	default:
		return nil, command.Usagef("one input expected, got %d arguments: %q", len(positional), positional)
	}
	if o.input == "" {
		o.input = "-"
	}
	if o.inputFmt != "" {
		if _, err := source.LookupUsage(o.inputFmt); err != nil {
			return nil, command.Usagef("--input-format: %v", err)
		}
	}
	r := &o.Replay
	*r = replay.Options{
		URL: v.URL, Model: v.Model, APIKey: v.APIKey, API: openai.API(v.API),
		Stream: !v.NoStream, IncludeUsage: !v.NoUsage, ContinuousUsage: v.ContinuousUsage,
		MaxCompletionTokensField: v.MaxCompField, IgnoreEOS: v.IgnoreEOS, N: v.Choices,
		SendConversationID: v.SendConvID || v.ConvIDField, SendSessionHeader: v.SendConvID || v.SessionIDHeader,
		SessionTokens: v.SessionTokens, SessionCookies: v.SessionCookies, BackendHeader: v.BackendHeader,
		ToolChoice: openai.ToolChoice(v.ToolChoice),
		Sampling:   replay.Sampling(v.Sampling), MaxInFlight: v.MaxConcurrency, Loop: v.Loop, MaxRequests: v.MaxRequests, Duration: v.Duration,
		MaxTurns: v.MaxUserTurns, WarmupTurns: v.WarmupTurns,
		FixedMaxTokens: v.MaxTokens, LimitMinTokens: v.ClampMin, LimitMaxTokens: v.ClampMax, SendMinTokens: v.MinTokens,
		MaxModelLen: v.MaxModelLen, MaxRetries: v.MaxRetries, OnFailure: replay.OnFailure(v.OnFailure),
		RequestTimeout: v.RequestTimeout, Verify: v.Verify, PrintContent: v.PrintContent,
		RunID: v.RunID, Shard: v.Shard, RandSeed: v.Seed,
	}
	for _, h := range v.SessionHeaders {
		t, err := replay.ParseHeaderTemplate(h)
		if err != nil {
			return nil, command.Usagef("--session-header: %v", err)
		}
		r.SessionHeaders = append(r.SessionHeaders, t)
	}
	switch v.Reasoning { // --keep-reasoning sets it to keep
	case "keep":
		r.KeepReasoning = true
	case "drop":
	default:
		return nil, command.Usagef("--reasoning-in-history: %q is not keep or drop", v.Reasoning)
	}
	poisson := false
	switch v.Arrival {
	case "poisson":
		poisson = true
	case "constant":
	default:
		return nil, command.Usagef("--arrival %q: want poisson or constant", v.Arrival)
	}
	if v.Given(&v.Temperature) {
		r.Temperature = record.Ptr(v.Temperature)
	}
	if v.Given(&v.Seed) {
		o.genSeed = &r.RandSeed
	}
	if v.Given(&v.RequestSeed) {
		r.Seed = record.Ptr(v.RequestSeed)
	}
	if hs := v.Headers; len(hs) > 0 {
		r.Headers = http.Header{}
		for _, h := range hs {
			k, v, ok := strings.Cut(h, ":")
			if !ok {
				k, v, ok = strings.Cut(h, "=")
			}
			if !ok || strings.TrimSpace(k) == "" {
				// The value is not echoed: it may be a secret typed wrong.
				return nil, command.Usagef("--header: want \"Name: value\" or \"Name=value\", got %d characters without a name and separator", len(h))
			}
			r.Headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	if v.ExtraBody != "" {
		if err := json.Unmarshal([]byte(v.ExtraBody), &r.ExtraBody); err != nil {
			return nil, command.Usagef("--extra-body: not a JSON object: %v", err)
		}
	}
	think, err := replay.ParseThink(v.ThinkTime, v.RequestRate)
	if err != nil {
		return nil, command.Usagef("%v", err)
	}
	r.Think = think
	if o.sched, err = v.scheduleFlags(); err != nil {
		return nil, err
	}
	o.sched.poisson = poisson
	if err := v.segmentOptions(o); err != nil {
		return nil, err
	}
	if o.Stage, err = v.stageSettings(); err != nil {
		return nil, err
	}
	if o.sim && v.Given(&v.URL) {
		return nil, command.Usagef("--sim and --url exclude each other")
	}
	if o.metrics, err = v.metricsOptions(); err != nil {
		return nil, err
	}
	if err := v.applyVLLM(o); err != nil {
		return nil, err
	}
	return o, v.applyConfig(positional, o)
}
