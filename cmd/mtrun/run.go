package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/stagerun"
	"github.com/mtkit/mtkit/internal/tokenize"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// options are mtrun's settings beyond the replay itself.
type options struct {
	replay     replay.Options
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
	args       []string // command line, for the manifest (secrets redacted)
	vllm       *vllmcompat.Outputs
	genSeed    *uint64 // --seed, for a generate_conversations input
	warnings   []string
	// timed is set when the input's format carries trace timestamps
	// (source.Format.Timed): the run then follows the trace clock unless
	// --rate, --users or --clients asks for another schedule.
	timed   bool
	sched   scheduleFlags  // the load-shape flags (schedule.go)
	metrics metricsOptions // metrics.go
	scale   scaleOut       // segment.go
	stage   stageSettings  // --stages, --sweep (stages.go)
	cfg     configFile     // --config, --dry-run (config.go)
	// replayRun, when set, replaces replay.Run: tests check the sweep
	// loop's wiring with it, without a server or a clock.
	replayRun stagerun.RunFunc
}

// options checks the flags and turns them into the run's settings;
// positional are the arguments after the options, args the command line
// (for the manifest, its secrets redacted).
func (v *flagValues) options(positional, args []string) (*options, error) {
	o := &options{
		input: v.input, inputFmt: v.inputFormat, tokenizer: v.tokenizer, records: v.records, convOut: v.output,
		manifest: v.manifest, sim: v.sim, simSpec: v.simConfig, warmupStep: v.warmupStep, quiet: v.quiet,
		cpuprofile: v.cpuprofile, termGrace: v.termGrace, args: manifest.RedactArgs(args, argRedactions),
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
	r := &o.replay
	*r = replay.Options{
		URL: v.url, Model: v.model, APIKey: v.apiKey, API: openai.API(v.api),
		Stream: !v.noStream, IncludeUsage: !v.noUsage, ContinuousUsage: v.continuousUsage,
		MaxCompletionTokensField: v.maxCompField, IgnoreEOS: v.ignoreEOS, N: v.choices,
		SendConversationID: v.sendConvID || v.convIDField, SendSessionHeader: v.sendConvID || v.sessionIDHdr,
		SessionTokens: v.sessionTokens.Value(), SessionCookies: v.sessionCookies, BackendHeader: v.backendHeader,
		ToolChoice: openai.ToolChoice(v.toolChoice),
		Sampling:   replay.Sampling(v.sampling), MaxInFlight: v.maxConcurrency, Loop: v.loop, MaxRequests: v.maxRequests, Duration: v.duration,
		MaxTurns: v.maxUserTurns, WarmupTurns: v.warmupTurns,
		FixedMaxTokens: v.maxTokens, LimitMinTokens: v.clampMin, LimitMaxTokens: v.clampMax, SendMinTokens: v.minTokens,
		MaxModelLen: v.maxModelLen, MaxRetries: v.maxRetries, OnFailure: replay.OnFailure(v.onFailure),
		RequestTimeout: v.requestTimeout, Verify: v.verify, PrintContent: v.printContent,
		RunID: v.runID, Shard: v.shard, RandSeed: v.seed,
	}
	for _, h := range v.sessionHeaders.Value() {
		t, err := replay.ParseHeaderTemplate(h)
		if err != nil {
			return nil, command.Usagef("--session-header: %v", err)
		}
		r.SessionHeaders = append(r.SessionHeaders, t)
	}
	switch v.reasoning { // --keep-reasoning sets it to keep
	case "keep":
		r.KeepReasoning = true
	case "drop":
	default:
		return nil, command.Usagef("--reasoning-in-history: %q is not keep or drop", v.reasoning)
	}
	poisson := false
	switch v.arrival {
	case "poisson":
		poisson = true
	case "constant":
	default:
		return nil, command.Usagef("--arrival %q: want poisson or constant", v.arrival)
	}
	if v.given(&v.temperature) {
		r.Temperature = record.Ptr(v.temperature)
	}
	if v.given(&v.seed) {
		o.genSeed = &r.RandSeed
	}
	if v.given(&v.requestSeed) {
		r.Seed = record.Ptr(v.requestSeed)
	}
	if hs := v.headers.Value(); len(hs) > 0 {
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
	if v.extraBody != "" {
		if err := json.Unmarshal([]byte(v.extraBody), &r.ExtraBody); err != nil {
			return nil, command.Usagef("--extra-body: not a JSON object: %v", err)
		}
	}
	think, err := replay.ParseThink(v.thinkTime, v.requestRate)
	if err != nil {
		return nil, command.Usagef("%v", err)
	}
	r.Think = think
	if o.sched, err = v.scheduleFlags(); err != nil {
		return nil, err
	}
	o.sched.poisson = poisson
	if err := v.scaleOut(o); err != nil {
		return nil, err
	}
	if o.stage, err = v.stageSettings(); err != nil {
		return nil, err
	}
	if o.sim && v.given(&v.url) {
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

// run loads the conversations, opens the outputs and replays.
func run(ctx context.Context, o *options, s command.Streams) (err error) {
	stop, abort, release := command.InterruptsGrace(ctx, s.Signals, o.termGrace)
	defer release()
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	if o.tokenizer != "none" && o.tokenizer != "" {
		tok, err := tokenize.Load(o.tokenizer)
		if err != nil {
			return err
		}
		o.replay.Tokenizer = tok
	}
	in, err := openInput(o, s)
	if err != nil {
		return err
	}
	defer in.Close()
	o.usePlan(in)
	if o.cfg.dryRun {
		return o.dryRun(s.Out)
	}
	if err := o.chooseSchedule(); err != nil {
		return err
	}
	if err := o.scale.apply(o); err != nil {
		return err
	}
	if o.replay.RunID == "" {
		o.replay.RunID = replay.NewRunID()
	}
	started := time.Now()
	// The manifest, written first next to the records, would otherwise
	// report its own temporary file.
	for _, out := range []struct{ flag, path string }{
		{"--records", o.records}, {"--output", o.convOut}, {"--manifest", o.manifest}, {"--metrics-file", o.metrics.file},
	} {
		if err := iox.CheckDir(out.flag, out.path); err != nil {
			return err
		}
	}
	// The manifest is written now, without a summary, so that a path that
	// cannot be written fails before the run rather than after it.
	// The input's digest is known at its end: it is in the final write.
	if err := writeManifest(o, nil, "", started, s.Out); err != nil {
		return err
	}
	if o.sim {
		cfg, err := sim.ParseConfig(o.simSpec)
		if err != nil {
			return command.Usagef("--sim-config: %v", err)
		}
		if cfg.Model == "" {
			// Serve the model the requests name (--model,
			// --served-model-name; issue 23: every request got 404).
			cfg.Model = o.replay.Model
		}
		srv, err := sim.Start(ctx, cfg)
		if err != nil {
			return err
		}
		defer srv.Close()
		o.replay.URL = srv.URL
	}

	var outs command.Outputs
	defer outs.Close() // on early returns; errors are reported below
	recs, err := record.Create(o.records, s.Out)
	if err != nil {
		return err
	}
	outs.Add("records", recs)
	if err := startMetrics(ctx, o, s.Err, &outs); err != nil {
		return err
	}
	defer o.vllm.Remove()
	collected, err := o.vllm.Collect(recs, s.Err)
	if err != nil {
		return err
	}
	sink := replay.Sink{Records: collected, Log: s.Err}
	if len(o.stage.stages) > 0 {
		sink.Records = stagerun.StageLoads{Encoder: sink.Records, First: 1, Stages: o.stage.stages}
	}
	if o.convOut != "" {
		f, err := iox.Create(o.convOut, s.Out)
		if err != nil {
			return err
		}
		out := vllmcompat.ConversationsOut(o.convOut, f)
		outs.Add(o.convOut, out)
		sink.Conversations = conv.NewWriter(out)
	}
	if command.IsTerminal(s.Err) && !o.quiet {
		sink.Progress = s.Err
	}
	var waitLog io.Writer
	if !o.quiet {
		waitLog = s.Err
	}
	if err := o.scale.start.Wait(stop, o.scale.seg, waitLog); err != nil {
		return err
	}
	var sum *replay.Summary
	var runErr error
	var warmSec *float64
	var src source.Source = in
	if o.warmupStep {
		// vLLM's warmup sends the first turn of every conversation, then
		// the replay starts over: the conversations are kept in between.
		first, again := source.Rewind(in)
		o.replay, sum, runErr = replay.WarmupStep(stop, abort, o.replay, o.sched.closed(), first, replay.Sink{Records: recs, Log: s.Err, Progress: sink.Progress})
		if sum != nil {
			warmSec = record.Ptr(sum.Elapsed.Seconds())
		}
		src = again()
	}
	if runErr == nil && stop.Err() == nil {
		sum, runErr = o.replayLoad(stop, abort, src, sink, s.Err) // sweep.go
	}
	if source.IsBadInput(runErr) {
		runErr = command.Exit(command.ExitUsage, runErr) // bad input, like a bad flag
	}
	// The digest reads what the run left of the input; not after an
	// interrupt, which must not wait for the rest of a long input.
	digest, derr := "", error(nil)
	if sum != nil && stop.Err() == nil {
		digest, derr = in.Digest()
	}
	// The first error is the one reported: a write error during the run
	// before one closing the outputs, before one writing the manifest.
	// The others go to stderr.
	errs := []error{runErr, outs.Close(), derr}
	if sum != nil {
		errs = append(errs, o.vllm.Write(in.Sessions(), warmSec, time.Now()), writeManifest(o, sum, digest, started, s.Out))
		if !o.quiet {
			printSummary(s.Err, sum, o.askedRate())
		}
	}
	if err := command.FirstError("mtrun", errs...); err != nil {
		return err
	}
	if stop.Err() != nil && ctx.Err() == nil {
		return command.Exit(command.ExitInterrupted, errors.New("interrupted; outputs are complete up to here"))
	}
	if sum != nil && sum.Requests > 0 && sum.Failed == sum.Requests {
		return fmt.Errorf("all %d requests failed (see the records' error field)", sum.Requests)
	}
	return nil
}

// openInput opens the input in its format (--input-format, or
// detected); a generate_conversations config is generated from
// in-process.
func openInput(o *options, s command.Streams) (*source.Input, error) {
	so := source.Options{Log: s.Err}
	if o.tokenizer != "none" {
		so.Tokenizer = o.tokenizer
	}
	if o.genSeed != nil {
		so.Seed, so.SeedSet = *o.genSeed, true
	}
	in, err := source.Open(o.input, o.inputFmt, s.In, so)
	if source.IsBadInput(err) {
		return nil, command.Exit(command.ExitUsage, err) // bad input, like a bad flag
	}
	if err != nil {
		return nil, err
	}
	o.timed = in.Timed()
	return in, nil
}

// askedRate is the session-start rate --rate asked for (the run's
// schedule is a schedule.Rate), 0 when the run asked for none, or for
// several (--stages, --sweep) or another shape.
func (o *options) askedRate() float64 {
	if r, ok := o.replay.Schedule.(schedule.Rate); ok {
		return r.PerSecond
	}
	return 0
}

// printSummary prints the end-of-run summary; asked is the session-start
// rate the run asked for (0: none), shown beside the achieved one.
func printSummary(w io.Writer, s *replay.Summary, asked float64) {
	fmt.Fprintf(w, "mtrun: run %s model %s: %d requests (%d failed, %d retries) in %s; conversations: %d started, %d finished, %d failed, %d abandoned, %d unfinished\n",
		s.RunID, s.Model, s.Requests, s.Failed, s.Retries, s.Elapsed.Round(time.Millisecond),
		s.Started, s.Finished, s.FailedConversations, s.Abandoned, s.Unfinished)
	if sec := s.Elapsed.Seconds(); sec > 0 {
		line := fmt.Sprintf("mtrun: achieved %.2f session starts/s", float64(s.Started)/sec)
		if asked > 0 {
			line += fmt.Sprintf(" (asked %s)", strconv.FormatFloat(asked, 'g', -1, 64))
		}
		fmt.Fprintf(w, "%s and %.2f requests/s over the %s run\n", line, float64(s.Requests)/sec, s.Elapsed.Round(time.Millisecond))
	}
	if s.Verified > 0 {
		line := fmt.Sprintf("mtrun: --verify-output: %d of %d answers differ from the dataset's", s.Mismatched, s.Verified)
		if f := s.FirstMismatch; f != nil {
			line += fmt.Sprintf(" (first: conversation %s, user turn %d)", f.Conversation, f.Turn)
		}
		fmt.Fprintln(w, line)
	}
	if s.WriteBlocked > 0 {
		fmt.Fprintf(w, "mtrun: the outputs were slower than the replay: sessions waited %s for the record writer (lateness and think times include it)\n", s.WriteBlocked.Round(time.Millisecond))
	}
}
