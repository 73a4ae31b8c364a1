package main

import (
	"os"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/segment"
)

// scaleOut is this process's part of a split run.
type scaleOut struct {
	seg   segment.Segment
	start segment.Start // --start-at
}

// scaleOut reads --segment, --segments and --start-at into o.
func (v *flagValues) scaleOut(o *options) error {
	o.scale = scaleOut{seg: segment.Whole, start: segment.Start{Clock: segment.RealClock{}}}
	var err error
	switch seg, segs := v.given(&v.segment), v.given(&v.segments); {
	case seg && segs:
		return command.Usagef("give --segment i/N or --segments N, not both")
	case seg:
		o.scale.seg, err = segment.Parse(v.segment)
	case segs:
		o.scale.seg, err = segment.FromEnv(v.segments, os.Getenv)
	}
	if err != nil {
		return command.Usagef("%v", err)
	}
	if v.startAt != "" {
		if o.scale.start.At, err = segment.ParseStart(v.startAt); err != nil {
			return command.Usagef("%v", err)
		}
	}
	seg, r := o.scale.seg, &o.replay
	if seg.IsWhole() {
		return nil
	}
	switch {
	case r.RunID == "":
		return command.Usagef("--segment %s: give every segment the same --run-id, so that mtstats merges them as one run", seg)
	case v.given(&v.shard) && r.Shard != seg.Index:
		return command.Usagef("--shard %d contradicts --segment %s (a segment's records carry shard = its index)", r.Shard, seg)
	}
	r.Shard = seg.Index
	r.Segment, r.Segments = seg.Index, seg.Count
	if host, err := os.Hostname(); err == nil {
		r.Host = host
	}
	r.MaxRequests = seg.Share(r.MaxRequests)
	r.MaxInFlight = seg.Share(r.MaxInFlight)
	r.WarmupTurns = seg.Share(r.WarmupTurns)
	return nil
}

// apply hands the replay this segment's part once the schedule is
// chosen. The schedule stays the whole run's (every stage, level,
// arrival time and user stagger); closed lanes (--clients, --users,
// clients and users stages) run the segment's lanes under their global
// indexes and take the sessions of those lanes; arrival schedules
// (--rate, rate stages, the trace clock) draw every session's arrival
// and fire every N-th. With --start-at the schedule counts from the
// common start.
func (s *scaleOut) apply(o *options) error {
	if !s.start.At.IsZero() && !o.warmupStep {
		o.replay.Start = s.start.At
	}
	if s.seg.IsWhole() {
		return nil
	}
	users := o.replay.Shape().Users()
	if users > 0 {
		o.replay.Lanes = s.seg.Lanes(users)
		if len(o.replay.Lanes) == 0 {
			return command.Usagef("--segment %s: the run has %d closed lanes (clients or users, the highest stage's), so segment %d would have none; use at most %d segments", s.seg, users, s.seg.Index, users)
		}
	}
	o.replay.Owns = s.seg.Filter(users).Runs
	return nil
}
