package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/retention"
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
	// An active sweep's records also go through the reuse-distance
	// analysis (mtstats' cache retention), for the effective capacity.
	var pass *retention.Pass
	if sw.planner.Kind == sweep.Active {
		pass = retention.New()
	}
	for n := 1; stop.Err() == nil; n++ {
		st, ok := sw.planner.Next(results)
		if !ok {
			break
		}
		ro := o.replay
		ro.Schedule, ro.Loop, ro.Duration = o.staged([]sweep.Stage{st}, n), true, 0
		ro.FirstSeq = seq
		acc := judge.NewStages(sw.objectives)
		sink.Records = teeStages{stageLoads{out, n, []sweep.Stage{st}}, acc, pass}
		var before tierHits
		if st.Kind == sweep.Active {
			before = o.tierHits(stop)
		}
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
		if st.Kind == sweep.Active {
			if after := o.tierHits(stop); before.ok && after.ok {
				res.Retention.Tiered = true
				res.Retention.LocalHitTokens, res.Retention.ExternalHitTokens = after.local-before.local, after.external-before.external
			}
			results = append(results, res)
			fmt.Fprintf(errw, "mtrun: sweep stage %d %s: %s\n", n, st, activeLine(res, sw.planner.Criteria, results))
			continue
		}
		results = append(results, res)
		fmt.Fprintf(errw, "mtrun: sweep stage %d %s: %.2f requests/s, lateness p99 %s, failed %.1f%%, steady %v, slo met %v, holds %v\n",
			n, st, res.Throughput, res.LatenessP99.Round(time.Microsecond), 100*res.Failed, sw.planner.Criteria.Steady(res), res.MeetsSLO, sw.planner.Criteria.Holds(res))
	}
	if len(results) > 0 {
		capa := sw.planner.Criteria.Judge(sw.planner.Kind, judge.ObjectiveTexts(sw.objectives), results)
		if pass != nil {
			r := pass.Result(retention.Options{})
			capa.Retention = &sweep.RetentionCapacity{Basis: sweep.Basis(r.Basis), CapacityTokens: r.CapacityTokens,
				CapacityConversations: r.CapacityConversations}
		}
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

// activeLine is the stderr line of an active sweep stage res, the last of
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

// tierHits are the server's prefix-cache hits so far, in tokens, per
// tier (vLLM's prefix_cache_hits and external_prefix_cache_hits).
type tierHits struct {
	local, external float64
	ok              bool // the server's metrics split the tiers
}

// tierHits scrapes the server's metrics once (the --metrics-url
// endpoints, else its own /metrics), summing every engine's counters;
// not ok without metrics, or when they have no external tier.
func (o *options) tierHits(ctx context.Context) tierHits {
	if o.metrics.off {
		return tierHits{}
	}
	urls := o.metrics.urls
	if len(urls) == 0 {
		urls = []string{metrics.DefaultURL(o.replay.URL)}
	}
	var h tierHits
	var local, external bool
	for _, u := range urls {
		ctx, cancel := context.WithTimeout(ctx, metrics.DefaultTimeout)
		sc, err := metrics.Fetch(ctx, http.DefaultClient, metrics.Target{URL: u, Header: serverHeaders(o, u)}, metrics.Limits{})
		cancel()
		if err != nil {
			return tierHits{}
		}
		for _, s := range sc.Samples {
			if s.Value == nil {
				continue
			}
			switch s.Canonical {
			case metrics.PrefixHits:
				h.local += *s.Value
				local = true
			case metrics.ExternalPrefixHits:
				h.external += *s.Value
				external = true
			}
		}
	}
	h.ok = local && external
	return h
}
