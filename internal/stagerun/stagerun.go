// Package stagerun runs the stages of a load: it labels staged records
// with their stage's load (StageLoads) and runs a capacity sweep (Sweep),
// one replay per stage the sweep.Planner chooses, judging each from its
// records as mtstats would, and writes the capacity.
package stagerun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/retention"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/sweep"
)

// StageLoads sets each staged record's stage_load: stage n (from First)
// ran at Stages[n-First].
type StageLoads struct {
	record.Encoder
	First  int
	Stages []sweep.Stage
}

// Encode sets r's stage_load and passes it on.
func (s StageLoads) Encode(r *record.Record) error {
	if i := r.Stage - s.First; r.Stage > 0 && i >= 0 && i < len(s.Stages) {
		r.StageLoad = s.Stages[i].Load()
	}
	return s.Encoder.Encode(r)
}

// RunFunc runs one replay: replay.Run, or a test's stand-in.
type RunFunc func(stop, abort context.Context, o replay.Options, src source.Source, sink replay.Sink) (*replay.Summary, error)

// SweepOptions configure Sweep.
type SweepOptions struct {
	Replay     replay.Options // each stage's, with its schedule
	Planner    sweep.Planner
	Objectives []judge.Objective
	// Schedule is the schedule of stage st, numbered n.
	Schedule func(st sweep.Stage, n int) schedule.Schedule
	// TierHits scrapes the server's prefix-cache hits per tier, before
	// and after each active stage.
	TierHits func(ctx context.Context) metrics.TierHits
	Capacity string  // the capacity JSON's file; "" writes none
	Run      RunFunc // replay.Run when nil
	Log      io.Writer
}

// Sweep runs a capacity sweep over src: one replay per stage the planner
// chooses (sessions do not carry over between stages; every stage loops
// over the input, which is read into memory first, and starts where the
// previous one stopped in it), each judged from its records. It logs a
// line per stage and the capacity, writes the capacity JSON, and returns
// the stages' summaries added up; with no steady stage, the capacity's
// error.
func Sweep(stop, abort context.Context, o SweepOptions, src source.Source, sink replay.Sink) (*replay.Summary, error) {
	runStage := o.Run
	if runStage == nil {
		runStage = replay.Run
	}
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
		seq     = o.Replay.FirstSeq
		err     error
	)
	out := sink.Records
	// An active sweep's records also go through the reuse-distance
	// analysis (mtstats' cache retention), for the effective capacity.
	var pass *retention.Pass
	if o.Planner.Kind == sweep.Active {
		pass = retention.New()
	}
	for n := 1; stop.Err() == nil; n++ {
		st, ok := o.Planner.Next(results)
		if !ok {
			break
		}
		ro := o.Replay
		ro.Schedule, ro.Loop, ro.Duration = o.Schedule(st, n), true, 0
		ro.FirstSeq = seq
		acc := judge.NewStages(o.Objectives)
		sink.Records = teeStages{StageLoads{out, n, []sweep.Stage{st}}, acc, pass}
		var before metrics.TierHits
		if st.Kind == sweep.Active {
			before = o.TierHits(stop)
		}
		// Each stage starts where the previous one stopped in the input,
		// so that its sessions are new to the server's cache.
		rotated := append(append([]conv.Conversation{}, convs[next:]...), convs[:next]...)
		var sum *replay.Summary
		sum, err = runStage(stop, abort, ro, source.Slice(rotated), sink)
		if sum != nil {
			AddSummary(&total, sum)
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
		if st.Kind == sweep.Active {
			if after := o.TierHits(stop); before.OK && after.OK {
				res.Retention.Tiered = true
				res.Retention.LocalHitTokens, res.Retention.ExternalHitTokens = after.Local-before.Local, after.External-before.External
			}
			results = append(results, res)
			fmt.Fprintf(o.Log, "mtrun: sweep stage %d %s: %s\n", n, st, activeLine(res, o.Planner.Criteria, results))
			continue
		}
		results = append(results, res)
		wait := "" // unknown in records from before client_wait_ns
		if res.ClientWaitKnown {
			wait = ", client wait p99 " + res.ClientWaitP99.Round(time.Microsecond).String()
		}
		fmt.Fprintf(o.Log, "mtrun: sweep stage %d %s: %.2f requests/s, lateness p99 %s%s, failed %.1f%%, steady %v, slo met %v, holds %v\n",
			n, st, res.Throughput, res.LatenessP99.Round(time.Microsecond), wait, 100*res.Failed, o.Planner.Criteria.Steady(res), res.MeetsSLO, o.Planner.Criteria.Holds(res))
	}
	if len(results) > 0 {
		capa := o.Planner.Criteria.Judge(o.Planner.Kind, judge.ObjectiveTexts(o.Objectives), results)
		if pass != nil {
			r := pass.Result(retention.Options{})
			capa.Retention = &sweep.RetentionCapacity{Basis: sweep.Basis(r.Basis), CapacityTokens: r.CapacityTokens,
				CapacityConversations: r.CapacityConversations}
		}
		fmt.Fprintln(o.Log, "mtrun: "+capa.Line())
		if werr := writeCapacity(o.Capacity, capa); werr != nil && err == nil {
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

// AddSummary adds the counts of s, a stage's, to total.
func AddSummary(total, s *replay.Summary) {
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
	acc  *judge.Stages
	pass *retention.Pass // nil: no retention analysis
}

func (t teeStages) Encode(r *record.Record) error {
	t.acc.Add(r)
	if t.pass != nil {
		t.pass.Add(r, r.Measured())
	}
	return t.Encoder.Encode(r)
}

// activeLine is the log line of an active sweep stage res, the last of
// results: its working set, what the server kept of it, and the verdict
// on what the sweep has measured so far.
func activeLine(res sweep.Result, c sweep.Criteria, results []sweep.Result) string {
	ret := res.Retention
	hit := "hit share n/a (no cached_tokens)"
	if !math.IsNaN(ret.HitShare) {
		hit = fmt.Sprintf("hit share %.3f", ret.HitShare)
	}
	tiers := ""
	if ret.Tiered {
		tiers = fmt.Sprintf(", hits local %.0f / external %.0f tokens", ret.LocalHitTokens, ret.ExternalHitTokens)
	}
	kept := c.Retained(results)
	return fmt.Sprintf("working set %.0f tokens, %d later turns, %s, later TTFT p50 %s%s; %.2f requests/s, failed %.1f%%, retained %v",
		ret.WorkingSetTokens, ret.LaterTurns, hit, ret.TTFTP50.Round(time.Microsecond), tiers, res.Throughput, 100*res.Failed, kept[len(kept)-1])
}
