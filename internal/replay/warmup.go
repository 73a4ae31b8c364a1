package replay

import (
	"context"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
)

// WarmupStep is vLLM's --warmup-step: it sends the first turn of every
// session of src in the closed loop lanes (vLLM's --num-clients and
// --max-active-conversations), recorded with phase=warmup (whatever o's
// schedule, --loop, --duration and --max-requests), and returns o for the
// measured run that follows, whose records are numbered after the
// warmup's. The measured run needs the sessions again, from the start: a
// fresh source.
func WarmupStep(stop, abort context.Context, o Options, lanes schedule.Closed, src source.Source, sink Sink) (Options, *Summary, error) {
	warm := o
	warm.Phase = record.PhaseWarmup
	warm.MaxTurns, warm.Loop, warm.Duration, warm.MaxRequests = 1, false, 0, 0
	warm.Schedule = lanes // first turns in closed loop, whatever the run's schedule
	if o.Lanes != nil {
		// A segment of a split run warms its own sessions with as many
		// lanes as it runs.
		warm.Schedule, warm.Lanes = schedule.Closed{Clients: max(len(o.Lanes), 1)}, nil
	}
	sum, err := Run(stop, abort, warm, src, sink)
	if sum != nil {
		o.FirstSeq = sum.NextSeq
	}
	return o, sum, err
}
