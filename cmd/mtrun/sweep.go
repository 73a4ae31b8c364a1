package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/sweep"
)

// replayLoad runs the measured replay: once, or with --sweep one replay
// per stage the planner chooses (sessions do not carry over between
// them), judging each from its records as mtstats would. A sweep reads
// the whole input first.
func (o *options) replayLoad(stop, abort context.Context, src source.Source, sink replay.Sink, errw io.Writer) (*replay.Summary, error) {
	sw := o.stage.sweep
	runStage := o.replayRun
	if runStage == nil {
		runStage = replay.Run
	}
	if p := o.cfg.plan; p != nil && p.Probe {
		return o.sweepInferencePerf(stop, abort, src, sink, errw, runStage) // config.go
	}
	if sw == nil {
		return runStage(stop, abort, o.replay, src, sink)
	}
	// Every stage loops over the input: it is read into memory first.
	var convs []conv.Conversation
	for c, ok := src.Next(); ok; c, ok = src.Next() {
		convs = append(convs, c)
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	if len(convs) == 0 {
		return nil, errors.New("--sweep: the input has no conversation")
	}
	var (
		total   replay.Summary
		results []sweep.Result
		next    = 0 // first conversation of the next stage
		seq     = o.replay.FirstSeq
		err     error
	)
	out := sink.Records
	for n := 1; stop.Err() == nil; n++ {
		st, ok := sw.planner.Next(results)
		if !ok {
			break
		}
		ro := o.replay
		ro.Schedule, ro.Loop, ro.Duration = o.staged([]sweep.Stage{st}, n), true, 0
		ro.FirstSeq = seq
		acc := judge.NewStages(sw.objectives)
		sink.Records = teeStages{stageLoads{out, n, []sweep.Stage{st}}, acc}
		// Each stage starts where the previous one stopped in the input,
		// so that its sessions are new to the server's cache.
		rotated := append(append([]conv.Conversation{}, convs[next:]...), convs[:next]...)
		var sum *replay.Summary
		sum, err = runStage(stop, abort, ro, source.Slice(rotated), sink)
		if sum != nil {
			addSummary(&total, sum)
			next = (next + int(sum.Started)) % len(convs)
			seq = sum.NextSeq
		}
		if err != nil || stop.Err() != nil {
			break
		}
		rows := acc.Rows()
		res := sweep.Result{Stage: st}
		if len(rows) > 0 {
			res = rows[0].Result(st)
		}
		results = append(results, res)
		fmt.Fprintf(errw, "mtrun: sweep stage %d %s: %.2f requests/s, lateness p99 %s, failed %.1f%%, steady %v, slo met %v, holds %v\n",
			n, st, res.Throughput, res.LatenessP99.Round(time.Microsecond), 100*res.Failed, sw.planner.Criteria.Steady(res), res.MeetsSLO, sw.planner.Criteria.Holds(res))
	}
	if len(results) > 0 {
		capa := sw.planner.Criteria.Judge(sw.planner.Kind, judge.ObjectiveTexts(sw.objectives), results)
		fmt.Fprintln(errw, "mtrun: "+capa.Line())
		if werr := writeCapacity(o.stage.capacity, capa); werr != nil && err == nil {
			err = werr
		}
		if err == nil && stop.Err() == nil {
			err = capa.Err() // no steady stage: no capacity, exit 1
		}
	}
	if total.RunID == "" {
		return nil, err
	}
	return &total, err
}

// writeCapacity writes the capacity JSON to path (none when empty).
func writeCapacity(path string, c sweep.Capacity) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := c.WriteJSON(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// addSummary adds the counts of s to total.
func addSummary(total, s *replay.Summary) {
	total.RunID, total.Model, total.MaxModelLen = s.RunID, s.Model, s.MaxModelLen
	total.Requests += s.Requests
	total.Attempts += s.Attempts
	total.Failed += s.Failed
	total.Retries += s.Retries
	total.Started += s.Started
	total.Finished += s.Finished
	total.FailedConversations += s.FailedConversations
	total.Abandoned += s.Abandoned
	total.Unfinished += s.Unfinished
	total.Elapsed += s.Elapsed
	total.WriteBlocked += s.WriteBlocked
	total.NextSeq = s.NextSeq // absolute: each stage continues the numbering
}

// teeStages passes records on and accounts them per stage.
type teeStages struct {
	record.Encoder
	acc *judge.Stages
}

func (t teeStages) Encode(r *record.Record) error {
	t.acc.Add(r)
	return t.Encoder.Encode(r)
}
