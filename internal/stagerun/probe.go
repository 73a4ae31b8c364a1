package stagerun

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mtkit/mtkit/internal/inferenceperf"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/sweep"
)

// RequestStages are an inference-perf plan's stages as records' stage
// loads (requests=RATE).
func RequestStages(stages []inferenceperf.Stage) []sweep.Stage {
	var out []sweep.Stage
	for _, s := range stages {
		out = append(out, sweep.Stage{Kind: sweep.Requests, Level: s.Rate, Duration: s.Duration})
	}
	return out
}

// Probe runs an inference-perf sweep (load.sweep) of plan: the probe, on
// the plan's schedule, recorded as warmup and measured for the sweep's
// timeout; then the stages generated from its saturation rate, as one
// staged run. o is the replay's settings; run is replay.Run when nil.
func Probe(stop, abort context.Context, o replay.Options, plan *inferenceperf.Plan, run RunFunc, log io.Writer, src source.Source, sink replay.Sink) (*replay.Summary, error) {
	if run == nil {
		run = replay.Run
	}
	sw := plan.Config.Load.Sweep
	probe := o
	probe.Phase, probe.Duration = record.PhaseWarmup, sw.Timeout
	spans := &probeSpans{Encoder: sink.Records}
	probeSink := sink
	probeSink.Records = spans
	var total replay.Summary
	sum, err := run(stop, abort, probe, src, probeSink)
	if sum != nil {
		AddSummary(&total, sum)
	}
	if err != nil || stop.Err() != nil {
		return &total, err
	}
	sat, err := inferenceperf.Saturation(spans.spans, sw.Timeout, sw.Percentile)
	if err != nil {
		return &total, err
	}
	stages := sw.Stages(sat)
	fmt.Fprintf(log, "mtrun: sweep: saturation %.2f requests/s (p%g of the probe's drain rates); stages at %v requests/s\n", sat, sw.Percentile, rates(stages))
	next, err := plan.Replan(stages)
	if err != nil {
		return &total, err
	}
	main := o
	main.Schedule, main.MaxInFlight, main.FirstSeq, main.Start = next.Schedule, next.MaxInFlight, total.NextSeq, time.Time{}
	sink.Records = StageLoads{sink.Records, 1, RequestStages(stages)}
	sum, err = run(stop, abort, main, source.Slice(next.Sessions), sink)
	if sum != nil {
		AddSummary(&total, sum)
	}
	return &total, err
}

// probeSpans passes records on and keeps their start and end.
type probeSpans struct {
	record.Encoder
	mu    sync.Mutex
	spans []inferenceperf.Span
}

func (p *probeSpans) Encode(r *record.Record) error {
	p.mu.Lock()
	p.spans = append(p.spans, inferenceperf.Span{Start: r.Start, End: r.End})
	p.mu.Unlock()
	return p.Encoder.Encode(r)
}

func rates(stages []inferenceperf.Stage) []float64 {
	out := make([]float64, len(stages))
	for i, s := range stages {
		out[i] = s.Rate
	}
	return out
}
