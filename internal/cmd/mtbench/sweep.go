package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/sweep"
)

// sweepSim is the simulator of the sweep section, with a capacity that
// can be computed from its configuration: at most sweepRunning sequences
// run, and every request takes the same time (TTFT 20 ms, then 18 gaps
// of 10 ms for its 19 tokens: 200 ms). With N clients and no think time,
// throughput grows as N / 0.2 s up to sweepRunning clients and stays at
// sweepRunning / 0.2 s beyond; past sweepRunning the queue adds
// (N − sweepRunning) × 200 ms / sweepRunning to the mean TTFT (Little's
// law), so p95 TTFT ≤ 70 ms holds up to sweepRunning clients and breaks
// above: both the knee and the SLO capacity are sweepRunning clients.
const sweepRunning = 16

// sweep runs mtrun --sweep clients against sweepSim and reports how far
// the capacity and knee it finds are from the computed value, and how
// long the search took.
func (b *bench) sweep(ctx context.Context, dir string) error {
	const sec = "sweep"
	h, err := startSim(sim.Config{TTFTBase: 20 * time.Millisecond, DecodePerToken: 10 * time.Millisecond, MaxRunning: sweepRunning}, false)
	if err != nil {
		return err
	}
	defer h.close()
	in := filepath.Join(dir, "convs.jsonl")
	if err := writeConvs(in, convSpec{n: 400, turns: 6, userWords: 8, output: 19}); err != nil {
		return err
	}
	stage, warm := pick(b, 1500*time.Millisecond, 6*time.Second), pick(b, 300*time.Millisecond, 1500*time.Millisecond)
	for i := range b.runs {
		capPath := filepath.Join(dir, fmt.Sprintf("capacity-%d.json", i))
		args := []string{"--tokenizer", "none", "--max-tokens", "19", "--min-tokens", "--think-time", "none",
			"--sweep", "clients", "--slo", "ttft_p95<=70ms", "--stage-duration", stage.String(), "--stage-warmup", warm.String(),
			"--sweep-unsteady", "0.3", "--sweep-stages", "9", "--capacity", capPath}
		t0 := time.Now()
		p, recs, err := b.mtrunRun(ctx, h.URL, in, filepath.Join(dir, fmt.Sprintf("records-%d.jsonl", i)), args, runOpts{})
		if err != nil {
			return err
		}
		wall := time.Since(t0)
		c, err := readCapacityFile(capPath)
		if err != nil {
			return err
		}
		b.logf("run %d: %s; %d stages, %d records in %s (mtrun CPU %s)", i+1, c.Line(), len(c.Stages), len(recs), wall.Round(100*time.Millisecond), p.CPU.Round(time.Millisecond))
		b.figs.add(sec, fmt.Sprintf("SLO capacity, error against the computed %d clients", sweepRunning), "%", atMost(15), 100*math.Abs(c.Capacity-sweepRunning)/sweepRunning)
		knee := math.NaN()
		if c.Knee != nil {
			knee = 100 * math.Abs(*c.Knee-sweepRunning) / sweepRunning
		}
		b.figs.add(sec, fmt.Sprintf("knee, error against the computed %d clients", sweepRunning), "%", atMost(15), knee)
		b.figs.add(sec, "stages run", "stages", nil, float64(len(c.Stages)))
		b.figs.add(sec, "sweep wall time", "s", nil, wall.Seconds())
	}
	b.figs.note(sec, fmt.Sprintf("SLO capacity, error against the computed %d clients", sweepRunning),
		fmt.Sprintf("mtrun --sweep clients --slo ttft_p95<=70ms, %s stages (%s warmup), against the simulator with max-running=%d and 200 ms requests: capacity and knee are %d clients by Little's law", stage, warm, sweepRunning, sweepRunning))
	return nil
}

// readCapacityFile reads a sweep's capacity JSON.
func readCapacityFile(path string) (sweep.Capacity, error) {
	var c sweep.Capacity
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}
