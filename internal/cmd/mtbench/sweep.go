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
	if err := b.stagedRuns(ctx, dir, in); err != nil {
		return err
	}
	b.figs.note(sec, fmt.Sprintf("SLO capacity, error against the computed %d clients", sweepRunning),
		fmt.Sprintf("mtrun --sweep clients --slo ttft_p95<=70ms, %s stages (%s warmup), against the simulator with max-running=%d and 200 ms requests: capacity and knee are %d clients by Little's law", stage, warm, sweepRunning, sweepRunning))
	return nil
}

// stagedRuns checks, on the real clock, what cmd/mtrun's unit tests
// check on parsed options only: a --stages run puts each record in the
// stage its intended send time falls in, with warmup records only in a
// stage's warmup and lanes opened as the level says; a --sweep users
// stage runs as many users as its level.
func (b *bench) stagedRuns(ctx context.Context, dir, in string) error {
	const sec = "sweep"
	h, err := startSim(sim.Config{TTFTBase: 2 * time.Millisecond, DecodePerToken: time.Millisecond}, false)
	if err != nil {
		return err
	}
	defer h.close()
	stage := pick(b, 500*time.Millisecond, 2*time.Second)
	warm := stage / 4
	for i := range b.runs {
		args := []string{"--tokenizer", "none", "--max-tokens", "3", "--think-time", "none",
			"--stages", fmt.Sprintf("clients=1:%s,clients=3:%s:%s", stage, stage, warm)}
		_, recs, err := b.mtrunRun(ctx, h.URL, in, filepath.Join(dir, fmt.Sprintf("stages-%d.jsonl", i)), args, runOpts{})
		if err != nil {
			return err
		}
		start := recs[0].Scheduled
		for _, r := range recs {
			if r.Scheduled.Before(start) {
				start = r.Scheduled
			}
		}
		misplaced, warmOutside := 0, 0
		lanes := map[int]map[int]bool{1: {}, 2: {}}
		for _, r := range recs {
			at := r.Scheduled.Sub(start)
			// The boundary counts from the run's start, a few ms before
			// the first intended time: records near it may go either way.
			nearBoundary := (at+stage/16)%stage < stage/8
			if want := 1 + int(at/stage); r.Stage != want && !nearBoundary || r.StageLoad != fmt.Sprintf("clients=%d", 2*r.Stage-1) {
				misplaced++
			}
			if !r.Measured() && (r.Stage != 2 || at >= stage+warm) {
				warmOutside++
			}
			if lanes[r.Stage] != nil {
				lanes[r.Stage][r.Client] = true
			}
		}
		b.logf("run %d: --stages: %d records, %d in a stage other than their intended time's, %d warmup records outside stage 2's warmup, lanes %d and %d", i+1, len(recs), misplaced, warmOutside, len(lanes[1]), len(lanes[2]))
		b.figs.add(sec, "--stages: records outside their intended time's stage", "records", atMost(0), float64(misplaced))
		b.figs.add(sec, "--stages: warmup records outside a stage's warmup", "records", atMost(0), float64(warmOutside))
		b.figs.add(sec, "--stages: stages whose lanes differ from their level", "stages", atMost(0), float64(absDiff(len(lanes[1]), 1)+absDiff(len(lanes[2]), 3)))

		capPath := filepath.Join(dir, fmt.Sprintf("capacity-users-%d.json", i))
		args = []string{"--tokenizer", "none", "--max-tokens", "3", "--sweep", "users", "--user-gap", "100ms",
			"--sweep-start", "2", "--sweep-max", "4", "--stage-duration", stage.String(), "--stage-warmup", warm.String(),
			"--sweep-unsteady", "0.5", "--capacity", capPath}
		_, recs, err = b.mtrunRun(ctx, h.URL, in, filepath.Join(dir, fmt.Sprintf("users-%d.jsonl", i)), args, runOpts{})
		if err != nil {
			return err
		}
		c, err := readCapacityFile(capPath)
		if err != nil {
			return err
		}
		users := map[int]map[int]bool{}
		for _, r := range recs {
			if users[r.Stage] == nil {
				users[r.Stage] = map[int]bool{}
			}
			users[r.Stage][r.Client] = true
		}
		off := 0
		for _, j := range c.Stages {
			if j.Kind != sweep.Users || len(users[j.Stage]) != int(j.Level) {
				off++
			}
		}
		b.logf("run %d: --sweep users: %s; %d of %d stages with as many users as their level", i+1, c.Line(), len(c.Stages)-off, len(c.Stages))
		b.figs.add(sec, "--sweep users: stages whose users differ from their level", "stages", atMost(0), float64(off))
	}
	b.figs.note(sec, "--stages: records outside their intended time's stage", fmt.Sprintf("mtrun --stages clients=1:%s,clients=3:%s:%s against a simulator with TTFT 2ms, 1ms/token", stage, stage, warm))
	b.figs.note(sec, "--sweep users: stages whose users differ from their level", "mtrun --sweep users --user-gap 100ms --sweep-start 2 --sweep-max 4")
	return nil
}

// absDiff is |a − b|.
func absDiff(a, b int) int { return max(a-b, b-a) }

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
