package mtrun

import (
	"os"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/segment"
)

// ScaleOut is this process's part of a split run.
type ScaleOut struct {
	Seg   segment.Segment
	Start segment.Start // --start-at
}

// segmentOptions reads --segment, --segments and --start-at into o.
func (v *Flags) segmentOptions(o *Options) error {
	o.Scale = ScaleOut{Seg: segment.Whole, Start: segment.Start{Clock: segment.RealClock{}}}
	var err error
	switch seg, segs := v.Given(&v.Segment), v.Given(&v.Segments); {
	case seg && segs:
		return command.Usagef("give --segment i/N or --segments N, not both")
	case seg:
		o.Scale.Seg, err = segment.Parse(v.Segment)
	case segs:
		o.Scale.Seg, err = segment.FromEnv(v.Segments, os.Getenv)
	}
	if err != nil {
		return command.Usagef("%v", err)
	}
	if v.StartAt != "" {
		if o.Scale.Start.At, err = segment.ParseStart(v.StartAt); err != nil {
			return command.Usagef("%v", err)
		}
	}
	seg, r := o.Scale.Seg, &o.Replay
	if seg.IsWhole() {
		return nil
	}
	switch {
	case r.RunID == "":
		return command.Usagef("--segment %s: give every segment the same --run-id, so that mtstats merges them as one run", seg)
	case v.Given(&v.Shard) && r.Shard != seg.Index:
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

// applySegment hands the replay this segment's part once the schedule is
// chosen. The schedule stays the whole run's (every stage, level,
// arrival time and user stagger); closed lanes (--clients, --users,
// clients and users stages) run the segment's lanes under their global
// indexes and take the sessions of those lanes; arrival schedules
// (--rate, rate stages, the trace clock) draw every session's arrival
// and fire every N-th. With --start-at the schedule counts from the
// common start.
func (o *Options) applySegment() error {
	s := &o.Scale
	if !s.Start.At.IsZero() && !o.warmupStep {
		o.Replay.Start = s.Start.At
	}
	if s.Seg.IsWhole() {
		return nil
	}
	users := o.Replay.Shape().Users()
	if users > 0 {
		o.Replay.Lanes = s.Seg.Lanes(users)
		if len(o.Replay.Lanes) == 0 {
			return command.Usagef("--segment %s: the run has %d closed lanes (clients or users, the highest stage's), so segment %d would have none; use at most %d segments", s.Seg, users, s.Seg.Index, users)
		}
	}
	o.Replay.Owns = s.Seg.Filter(users).Runs
	return nil
}
