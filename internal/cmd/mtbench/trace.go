package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mtkit/mtkit/internal/sim"
)

// Shape of the synthetic bursty trace (burstTrace), modelled on the
// first 300 lines of Mooncake's conversation trace
// (internal/source/testdata/traces): a burst every 3,000 ms, up to 17
// requests with the same timestamp, prompts of about 11k tokens.
const (
	burstEvery   = 3000 // ms between bursts
	burstMax     = 17   // requests in the largest burst
	burstMinIn   = 1000 // prompt tokens, log-uniform between these
	burstMaxIn   = 40000
	burstOutput  = 16 // output tokens of every request
	mooncakeBlk  = 512
	traceSimTTFT = 5 * time.Millisecond
)

// mooncakeExcerpt is the real Mooncake trace excerpt kept as a test
// fixture, relative to the repository's root (scripts/bench.sh runs
// mtbench there).
const mooncakeExcerpt = "internal/source/testdata/traces/mooncake_conversation_head300.jsonl"

// trace replays a synthetic bursty Mooncake trace on the trace clock
// (--time-scale 0.2 and 0.05) and reports the lateness of every request
// (actual send − intended send, as mtrun records it), and mtrun's max
// RSS. mtrun synthesizes each prompt from its hash blocks and counts its
// tokens (o200k_base) itself, so the figures show what that work does
// to a burst's send times (issue 26). mtrun runs pinned to CPU 1 and
// this process (the simulator) to CPU 0 while the section runs, as in
// the measurement; with --base-bin the base mtrun runs the same
// trace, interleaved.
func (b *bench) trace(ctx context.Context, dir string) error {
	const sec = "trace"
	restore, pinned := pinSelf("0")
	defer restore()
	h, err := startSim(sim.Config{TTFTBase: traceSimTTFT, DecodePerToken: time.Millisecond}, false)
	if err != nil {
		return err
	}
	defer h.close()
	n := pick(b, 60, 200)
	path := filepath.Join(dir, "bursts.jsonl")
	bursts, err := burstTrace(path, n, 26)
	if err != nil {
		return err
	}
	cpus := ""
	if pinned {
		cpus = "1"
	}
	traces := []struct{ name, path, label string }{{"synthetic", path, "burst lateness"}}
	if b.smoke {
		// The excerpt lasts 21 s at 0.2: a full run's figure only.
		b.figs.na(sec, "Mooncake excerpt: lateness p99 at --time-scale 0.2", "ms", atMost(2), "not in --smoke")
	} else if _, err := os.Stat(mooncakeExcerpt); err == nil {
		traces = append(traces, struct{ name, path, label string }{"Mooncake excerpt", mooncakeExcerpt, "Mooncake excerpt: lateness"})
	} else {
		b.figs.na(sec, "Mooncake excerpt: lateness p99 at --time-scale 0.2", "ms", atMost(2), "run from the repository's root to find "+mooncakeExcerpt)
	}
	for _, tr := range traces {
		want, err := countLines(tr.path)
		if err != nil {
			return err
		}
		for _, scale := range []float64{0.2, 0.05} {
			for i := range b.runs {
				for _, v := range b.variants(i) {
					v.cpus = cpus
					load := loadAverage()
					args := []string{"--time-scale", fmt.Sprint(scale)}
					var wait time.Duration
					p, recs, err := b.mtrunWith(ctx, v, h.URL, tr.path, filepath.Join(dir, "trace.records.jsonl"), args, runOpts{during: watchRunQueue(&wait)})
					if err != nil {
						return err
					}
					if p.ExitCode != 0 || p.Signalled {
						return fmt.Errorf("%s, --time-scale %g%s: mtrun exit status %d (signalled %v): %s", tr.name, scale, v.label, p.ExitCode, p.Signalled, tail(p.Stderr, 800))
					}
					// How long mtrun's threads were runnable but had no CPU,
					// per second of the run: the machine's share.
					rq := ms(wait) / p.Wall.Seconds()
					var late []float64
					failed := 0
					for _, r := range recs {
						if r.Attempt != 0 || r.Choice != 0 {
							continue
						}
						if !r.OK() {
							failed++
						}
						late = append(late, float64(r.LatenessNs)/1e6)
					}
					if len(late) != want {
						return fmt.Errorf("%s, --time-scale %g%s: %d requests recorded, want %d", tr.name, scale, v.label, len(late), want)
					}
					slices.Sort(late)
					b.logf("run %d%s, %s, --time-scale %g: %d requests (%d failed); lateness p50 %.3f p90 %.3f p99 %.3f max %.3f ms; max RSS %d MiB; CPU %s; threads runnable without a CPU %.0f ms/s; load %.2f",
						i+1, v.label, tr.name, scale, want, failed, q(late, .5), q(late, .9), q(late, .99), q(late, 1), p.MaxRSS>>20, p.CPU.Round(time.Millisecond), rq, load)
					name := fmt.Sprintf("at --time-scale %g%s", scale, v.label)
					p99, max := atMost(2), atMost(5)
					if scale < 0.2 {
						p99, max = atMost(5), nil
					}
					b.figs.add(sec, tr.label+" p50 "+name, "ms", nil, q(late, .5))
					b.figs.add(sec, tr.label+" p99 "+name, "ms", v.tgt(p99), q(late, .99))
					b.figs.add(sec, tr.label+" max "+name, "ms", v.tgt(max), q(late, 1))
					b.figs.add(sec, tr.name+": mtrun max RSS "+name, "MB", nil, float64(p.MaxRSS)/1e6)
					b.figs.add(sec, tr.name+": mtrun CPU "+name, "s", nil, p.CPU.Seconds())
					b.figs.add(sec, tr.name+": mtrun's threads runnable without a CPU "+name, "ms/s", nil, rq)
					b.figs.add(sec, tr.name+": load average (1 min) "+name, "", nil, load)
				}
			}
		}
	}
	pin := "mtrun pinned to CPU 1 (taskset), the simulator's process to CPU 0"
	if !pinned {
		pin = "not pinned (no taskset)"
	}
	b.figs.note(sec, "Mooncake excerpt: lateness p99 at --time-scale 0.2", "the first 300 lines of Mooncake's conversation trace ("+mooncakeExcerpt+"): 35 timestamps 3 s apart, up to 16 requests at one, prompts of 14k tokens on average, output lengths as in the trace; otherwise as the synthetic trace")
	b.figs.note(sec, "burst lateness p99 at --time-scale 0.2", fmt.Sprintf(
		"synthetic Mooncake trace: %d requests in %d bursts %d ms apart (1 to %d at one timestamp), prompts log-uniform %d-%d tokens (block 0 shared, the rest new), %d output tokens; simulator TTFT %v, 1 ms a token; %s; lateness = mtrun's lateness_ns: actual send − intended send less the wait for the previous answer (client_wait_ns); "+
			"[before] is the --base-bin mtrun, run interleaved with this tree's",
		n, bursts, burstEvery, burstMax, burstMinIn, burstMaxIn, burstOutput, traceSimTTFT, pin))
	return nil
}

// burstTrace writes a Mooncake-format trace of n requests to path: a
// burst every burstEvery ms, the first of burstMax requests and the
// others of 1 to burstMax, prompts log-uniform between burstMinIn and
// burstMaxIn tokens that share block 0 and are otherwise new blocks. It
// returns the number of bursts.
func burstTrace(path string, n int, seed uint64) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(seed, 0x6275727374))
	next := uint64(1) // next new block id
	bursts := 0
	for i := 0; i < n; bursts++ {
		size := burstMax
		if bursts > 0 {
			size = 1 + rng.IntN(burstMax)
		}
		for k := 0; k < size && i < n; k, i = k+1, i+1 {
			in := int(math.Exp(math.Log(burstMinIn) + rng.Float64()*math.Log(float64(burstMaxIn)/burstMinIn)))
			blocks := (in + mooncakeBlk - 1) / mooncakeBlk
			fmt.Fprintf(w, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [0`, bursts*burstEvery, in, burstOutput)
			for range blocks - 1 {
				fmt.Fprintf(w, ", %d", next)
				next++
			}
			w.WriteString("]}\n")
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return bursts, f.Close()
}
