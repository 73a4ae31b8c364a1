// Package mtrun is the mtrun program (cmd/mtrun is its flags): Flags,
// the command line as given; Options, the run's checked settings; Run,
// which opens the input and the outputs and replays (once, staged, or a
// sweep).
package mtrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/stagerun"
	"github.com/mtkit/mtkit/internal/tokenize"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// Run loads the conversations, opens the outputs and replays; s are
// the command's streams and signals.
func Run(ctx context.Context, o *Options, s command.Streams) (err error) {
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
		o.Replay.Tokenizer = tok
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
	if err := o.Plan(); err != nil {
		return err
	}
	if o.Replay.RunID == "" {
		o.Replay.RunID = replay.NewRunID()
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
			cfg.Model = o.Replay.Model
		}
		srv, err := sim.Start(ctx, cfg)
		if err != nil {
			return err
		}
		defer srv.Close()
		o.Replay.URL = srv.URL
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
	defer o.VLLM.Remove()
	if o.VLLM != nil {
		o.VLLM.Redact = replay.NewRedactor(&o.Replay).String
	}
	collected, err := o.VLLM.Collect(recs, o.records, s.Err)
	if err != nil {
		return err
	}
	sink := replay.Sink{Records: collected, Log: s.Err}
	if len(o.Stage.Stages) > 0 {
		sink.Records = stagerun.StageLoads{Encoder: sink.Records, First: 1, Stages: o.Stage.Stages}
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
	if err := o.Scale.Start.Wait(stop, o.Scale.Seg, waitLog); err != nil {
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
		o.Replay, sum, runErr = replay.WarmupStep(stop, abort, o.Replay, o.sched.closed(), first, replay.Sink{Records: recs, Log: s.Err, Progress: sink.Progress})
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
		errs = append(errs, o.VLLM.Write(abort, in.Sessions(), warmSec, time.Now()), writeManifest(o, sum, digest, started, s.Out))
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
func openInput(o *Options, s command.Streams) (*source.Input, error) {
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
	o.Timed = in.Timed()
	return in, nil
}

// askedRate is the session-start rate --rate asked for (the run's
// schedule is a schedule.Rate), 0 when the run asked for none, or for
// several (--stages, --sweep) or another shape.
func (o *Options) askedRate() float64 {
	if r, ok := o.Replay.Schedule.(schedule.Rate); ok {
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
