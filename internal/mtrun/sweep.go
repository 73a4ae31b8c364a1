package mtrun

import (
	"context"
	"io"

	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/stagerun"
	"github.com/mtkit/mtkit/internal/sweep"
)

// replayLoad runs the measured replay: once, or with --sweep one replay
// per stage the planner chooses (stagerun.Sweep), or an inference-perf
// config's probe sweep.
func (o *Options) replayLoad(stop, abort context.Context, src source.Source, sink replay.Sink, errw io.Writer) (*replay.Summary, error) {
	sw := o.Stage.Sweep
	runStage := o.replayRun
	if runStage == nil {
		runStage = replay.Run
	}
	if p := o.cfg.plan; p != nil && p.Probe {
		return stagerun.Probe(stop, abort, o.Replay, p, runStage, errw, src, sink)
	}
	if sw == nil {
		return runStage(stop, abort, o.Replay, src, sink)
	}
	return stagerun.Sweep(stop, abort, stagerun.SweepOptions{
		Replay: o.Replay, Planner: sw.Planner, Objectives: sw.Objectives,
		Schedule: func(st sweep.Stage, n int) schedule.Schedule { return o.staged([]sweep.Stage{st}, n) },
		TierHits: o.tierHits, Capacity: o.Stage.Capacity, Run: runStage, Log: errw,
	}, src, sink)
}

// tierHits are the server's prefix-cache hits so far, per tier
// (metrics.FetchTierHits); not OK with --no-metrics.
func (o *Options) tierHits(ctx context.Context) metrics.TierHits {
	if o.metrics.off {
		return metrics.TierHits{}
	}
	return metrics.FetchTierHits(ctx, o.server(), o.metrics.urls)
}
