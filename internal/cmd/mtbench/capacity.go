package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mtkit/mtkit/internal/sim"
)

// capacity measures the most turns/s and chunks/s mtrun sustains against
// a zero-latency simulator on the same machine, and mtrun's CPU time per
// request and per chunk from its own rusage. The simulator runs in this
// process, so its CPU is not counted as the client's; the CPU of mtrun's
// start-up (loading the tokenizer, the input) is measured by a one-request
// run and subtracted.
func (b *bench) capacity(ctx context.Context, dir string) error {
	const sec = "capacity"
	h, err := startSim(sim.Config{}, false)
	if err != nil {
		return err
	}
	defer h.close()
	dur := pick(b, 1*time.Second, 4*time.Second)
	type load struct {
		name    string
		clients int
		spec    convSpec
	}
	turns := load{"turns", 64, convSpec{n: 2000, turns: 4, userWords: 8, output: 4}}
	turns32 := load{"turns32", 64, convSpec{n: 2000, turns: 4, userWords: 8, output: 32}}
	chunks := load{"chunks", 32, convSpec{n: 200, turns: 2, userWords: 8, output: 2000}}
	one := convSpec{n: 1, turns: 1, userWords: 8, output: 1}
	for _, l := range []load{turns, turns32, chunks, {"one", 1, one}} {
		if err := writeConvs(filepath.Join(dir, l.name+".jsonl"), l.spec); err != nil {
			return err
		}
	}
	for i := range b.runs {
		// Start-up cost: one request.
		p, _, err := b.mtrunRun(ctx, h.URL, filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "one.records.jsonl"), nil, runOpts{})
		if err != nil {
			return err
		}
		base := p.CPU
		b.figs.add(sec, "mtrun start-up CPU (1 request, subtracted below)", "ms", nil, ms(base))
		for _, l := range []load{turns, turns32, chunks} {
			args := []string{"--clients", fmt.Sprint(l.clients), "--loop", "--duration", dur.String(), "--think-time", "none"}
			p, recs, err := b.mtrunRun(ctx, h.URL, filepath.Join(dir, l.name+".jsonl"), filepath.Join(dir, l.name+".records.jsonl"), args, runOpts{})
			if err != nil {
				return err
			}
			secs, failed := span(recs)
			if failed > 0 || len(recs) == 0 || secs <= 0 {
				return fmt.Errorf("%s load: %d records, %d failed", l.name, len(recs), failed)
			}
			n := 0
			for _, r := range recs {
				n += r.Chunks
			}
			cpu := max(p.CPU-base, 0)
			b.logf("run %d %s: %d requests, %d chunks in %.2fs; mtrun CPU %s (start-up %s), max RSS %d MiB",
				i+1, l.name, len(recs), n, secs, p.CPU.Round(time.Millisecond), base.Round(time.Millisecond), p.MaxRSS>>20)
			switch l.name {
			case "turns":
				b.figs.add(sec, fmt.Sprintf("turns/s (%d clients, 4-token answers)", l.clients), "turns/s", atLeast(5000), float64(len(recs))/secs)
				b.figs.add(sec, "mtrun CPU per request", "µs", nil, us(cpu)/float64(len(recs)))
			case "turns32":
				if n != 32*len(recs) {
					return fmt.Errorf("32-token load: %d chunks in %d turns, want 32 each", n, len(recs))
				}
				b.figs.add(sec, fmt.Sprintf("turns/s (%d clients, 32-token answers)", l.clients), "turns/s", nil, float64(len(recs))/secs)
				b.figs.add(sec, "mtrun CPU per turn (32 chunks)", "ms", atMost(0.1), ms(cpu)/float64(len(recs)))
			case "chunks":
				b.figs.add(sec, fmt.Sprintf("streamed chunks/s (%d clients, 2,000-token answers)", l.clients), "chunks/s", atLeast(200000), float64(n)/secs)
				b.figs.add(sec, "mtrun CPU per chunk", "µs", atMost(1), us(cpu)/float64(n))
			}
		}
	}
	b.figs.note(sec, "mtrun CPU per turn (32 chunks)", "64 clients, 4-turn conversations whose answers are 32 tokens (32 streamed chunks), --loop; marginal CPU of the mtrun process per turn, as for the per-chunk figure")
	b.figs.note(sec, "mtrun CPU per chunk", "marginal CPU (user+system from wait4 rusage, start-up subtracted) of the mtrun process alone; the simulator's CPU is in the mtbench process")
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
