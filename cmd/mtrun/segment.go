package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/segment"
)

// scaleFlags are the flags of a run split over several processes
// (docs/scale-out.md).
func scaleFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "segment", Usage: "run part `i/N` of a run split over N processes (i from 0 to N-1): its own sessions, on the run's global schedule (docs/scale-out.md)"},
		&cli.IntFlag{Name: "segments", Usage: "split the run over `N` processes, this one's index from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)"},
		&cli.StringFlag{Name: "start-at", Usage: "wait for the wall-clock `TIME` (RFC 3339, e.g. 2026-11-23T23:30:00Z) before the first request; refuse when more than 1s late"},
	}
	cliflag.SetCategory("Scale-out (docs/scale-out.md):", flags)
	return flags
}

// scaleOut is this process's part of a split run.
type scaleOut struct {
	seg     segment.Segment
	startAt time.Time // zero: start at once
	clock   segment.Clock
}

// scaleFrom reads --segment, --segments and --start-at into o.
func scaleFrom(c *cli.Context, o *options) error {
	o.scale = scaleOut{seg: segment.Whole, clock: segment.RealClock{}}
	var err error
	switch {
	case c.IsSet("segment") && c.IsSet("segments"):
		return command.Usagef("give --segment i/N or --segments N, not both")
	case c.IsSet("segment"):
		o.scale.seg, err = segment.Parse(c.String("segment"))
	case c.IsSet("segments"):
		o.scale.seg, err = segment.FromEnv(c.Int("segments"), os.Getenv)
	}
	if err != nil {
		return command.Usagef("%v", err)
	}
	if v := c.String("start-at"); v != "" {
		if o.scale.startAt, err = segment.ParseStart(v); err != nil {
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
	case c.IsSet("shard") && r.Shard != seg.Index:
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
	if !s.startAt.IsZero() && !o.warmupStep {
		o.replay.Start = s.startAt
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

// wait waits for --start-at, if given.
func (s *scaleOut) wait(ctx context.Context, stderr io.Writer, quiet bool) error {
	if s.startAt.IsZero() {
		return nil
	}
	if !quiet {
		fmt.Fprintf(stderr, "mtrun: segment %s waiting for %s\n", s.seg, s.startAt.UTC().Format(time.RFC3339Nano))
	}
	late, err := segment.WaitStart(ctx, s.clock, s.startAt)
	if err != nil {
		return err
	}
	if late > 0 && !quiet {
		fmt.Fprintf(stderr, "mtrun: started %s after --start-at\n", late.Round(time.Millisecond))
	}
	return nil
}

// startAtString is --start-at for the manifest, "" when not given.
func (s *scaleOut) startAtString() string {
	if s.startAt.IsZero() {
		return ""
	}
	return s.startAt.UTC().Format(time.RFC3339Nano)
}
