package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/mtkit/mtkit/internal/sim"
)

// schedule runs mtrun open-loop (--rate, constant arrivals) against a
// fast simulator and compares the achieved arrival rate with the asked
// one, and reports the lateness of each arrival (actual send − intended
// send, as mtrun records it). The achieved rate is (n − 1) / (last first-
// turn start − first first-turn start). Constant arrivals make the
// schedule itself exact; Poisson arrivals would add their own sampling
// noise (±1/√n) to the rate.
func (b *bench) schedule(ctx context.Context, dir string) error {
	const sec = "schedule"
	h, err := startSim(sim.Config{TTFTBase: 2 * time.Millisecond, DecodePerToken: time.Millisecond}, false)
	if err != nil {
		return err
	}
	defer h.close()
	for _, rate := range []float64{50, 500, 2000} {
		dur := pick(b, time.Second, 4*time.Second)
		if rate == 50 {
			dur = pick(b, 2*time.Second, 8*time.Second)
		}
		n := int(rate*dur.Seconds()*1.2) + 10
		path := filepath.Join(dir, fmt.Sprintf("r%g.jsonl", rate))
		if err := writeConvs(path, convSpec{n: n, turns: 1, userWords: 8, output: 5, seed: uint64(rate)}); err != nil {
			return err
		}
		for i := range b.runs {
			args := []string{"--rate", fmt.Sprint(rate), "--arrival", "constant", "--duration", dur.String(), "--tokenizer", "none"}
			_, recs, err := b.mtrunRun(ctx, h.URL, path, filepath.Join(dir, fmt.Sprintf("r%g.records.jsonl", rate)), args, runOpts{})
			if err != nil {
				return err
			}
			var starts []time.Time
			var late []float64
			failed := 0
			for _, r := range recs {
				if r.Turn != 0 || r.Attempt != 0 || r.Choice != 0 {
					continue
				}
				if !r.OK() {
					failed++
				}
				starts = append(starts, r.Start)
				late = append(late, float64(r.LatenessNs)/1e6)
			}
			if len(starts) < 2 {
				return fmt.Errorf("rate %g: only %d conversations started", rate, len(starts))
			}
			slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
			slices.Sort(late)
			achieved := float64(len(starts)-1) / starts[len(starts)-1].Sub(starts[0]).Seconds()
			dev := 100 * math.Abs(achieved/rate-1)
			b.logf("run %d, rate %g/s: %d arrivals (%d failed), achieved %.2f/s (%.3f%% off); lateness p50 %.3f p99 %.3f max %.3f ms",
				i+1, rate, len(starts), failed, achieved, dev, q(late, .5), q(late, .99), q(late, 1))
			name := fmt.Sprintf("at %s/s", thousands(int64(rate)))
			b.figs.add(sec, "achieved rate "+name, "conv/s", nil, achieved)
			b.figs.add(sec, "|achieved − asked| "+name, "%", atMost(1), dev)
			b.figs.add(sec, "lateness p50 "+name, "ms", nil, q(late, .5))
			b.figs.add(sec, "lateness p99 "+name, "ms", atMost(2), q(late, .99))
			b.figs.add(sec, "lateness max "+name, "ms", nil, q(late, 1))
		}
	}
	b.figs.note(sec, "|achieved − asked| at 50/s", "open loop, --arrival constant, one-turn conversations against a simulator with TTFT 2ms, 1ms/token, 5 tokens; lateness = mtrun's lateness_ns, actual send − intended send (one-turn conversations never wait for their client: client_wait_ns 0)")
	return nil
}
