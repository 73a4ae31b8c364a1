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

// retentionSweep runs `mtrun --sweep active` (4 clients, the active
// conversations doubling, then bisected) against a zero-timing simulator
// with one cache of 40,000 and one of 150,000 tokens (block 16), and
// reports how far the sweep's effective capacity (its capacity JSON's
// retention.capacity_tokens, the reuse-distance analysis of all its
// records) is from the configured size. A sweep's stages last a wall-clock
// time, so this is a benchmark, not a unit test.
func (b *bench) retentionSweep(ctx context.Context, dir string) error {
	const sec = "retention"
	in := filepath.Join(dir, "sweep-convs.jsonl")
	spec := convSpec{n: pick(b, 300, 600), turns: 10, userWords: 80, output: 50, seed: 22}
	if err := writeConvs(in, spec); err != nil {
		return err
	}
	for i := range b.runs {
		for _, size := range []int{40000, 150000} {
			h, err := startSim(sim.Config{CacheTokens: size, BlockSize: 16}, false)
			if err != nil {
				return err
			}
			capPath := filepath.Join(dir, fmt.Sprintf("sweep-%d-%d.capacity.json", size, i))
			args := []string{"--tokenizer", "none", "--min-tokens", "--sweep", "active", "--clients", "4",
				"--stage-duration", "3s", "--stage-warmup", "1s", "--capacity", capPath}
			t0 := time.Now()
			_, _, err = b.mtrunRun(ctx, h.URL, in, filepath.Join(dir, fmt.Sprintf("sweep-%d-%d.jsonl", size, i)), args, runOpts{})
			h.close()
			if err != nil {
				return err
			}
			wall := time.Since(t0)
			data, err := os.ReadFile(capPath)
			if err != nil {
				return err
			}
			var c sweep.Capacity
			if err := json.Unmarshal(data, &c); err != nil {
				return fmt.Errorf("%s: %v", capPath, err)
			}
			got := math.NaN()
			if c.Retention != nil && c.Retention.CapacityTokens != nil {
				got = *c.Retention.CapacityTokens
			}
			b.logf("run %d, --sweep active against cache=%d: %s (%d stages in %s)", i+1, size, c.Line(), len(c.Stages), wall.Round(100*time.Millisecond))
			name := fmt.Sprintf("--sweep active, effective capacity, error against cache=%s", thousands(int64(size)))
			b.figs.add(sec, name, "%", atMost(10), 100*math.Abs(got-float64(size))/float64(size))
			b.figs.note(sec, name, fmt.Sprintf("mtrun --sweep active --clients 4 --stage-duration 3s --stage-warmup 1s over %d conversations of %d turns (%d-word questions, %d-token answers) against the simulator with cache=%d,block=16 and zero timing: the capacity JSON's retention.capacity_tokens", spec.n, spec.turns, spec.userWords, spec.output, size))
		}
	}
	return nil
}
