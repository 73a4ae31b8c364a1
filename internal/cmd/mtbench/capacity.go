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
	turns := load{"turns", 64, convSpec{n: 2000, turns: 4, userWords: 8, output: 4}}
	turns32 := load{"turns32", 64, convSpec{n: 2000, turns: 4, userWords: 8, output: 32}}
	chunks := load{"chunks", 32, convSpec{n: 200, turns: 2, userWords: 8, output: 2000}}
	// Multi-turn: the history grows with each turn, so what mtrun does per
	// history message (client token counts, body building) shows here and
	// not in the one-turn figures (issue 26).
	multi := load{"multi", 64, convSpec{n: 500, turns: 4, userWords: 100, output: 32}}
	multiChunks := load{"multichunks", 32, convSpec{n: 200, turns: 4, userWords: 100, output: 2000}}
	one := convSpec{n: 1, turns: 1, userWords: 8, output: 1}
	for _, l := range []load{turns, turns32, multi, chunks, multiChunks, {"one", 1, one}} {
		if err := writeConvs(filepath.Join(dir, l.name+".jsonl"), l.spec); err != nil {
			return err
		}
	}
	for i := range b.runs {
		for _, v := range b.variants(i) {
			if err := b.capacityRun(ctx, dir, h.URL, i, v, []load{turns, turns32, multi, chunks, multiChunks}, dur); err != nil {
				return err
			}
		}
	}
	b.figs.note(sec, "mtrun CPU per turn, 4-turn conversations (100-token messages, 32 chunks)", "64 clients, 500 conversations of 4 turns, user messages of 100 words (~100 tokens), 32-token answers, --loop; the history grows with each turn; marginal CPU per turn, as below")
	b.figs.note(sec, "mtrun CPU per chunk, 4-turn conversations (100-token messages, 2,000-token answers)", "32 clients, 200 conversations of 4 turns, user messages of 100 words, 2,000-token answers (the history grows by one answer a turn), --loop; marginal CPU per chunk")
	b.figs.note(sec, "mtrun CPU per turn (32 chunks)", "64 clients, 4-turn conversations whose answers are 32 tokens (32 streamed chunks), --loop; marginal CPU of the mtrun process per turn, as for the per-chunk figure")
	b.figs.note(sec, "mtrun CPU per chunk", "marginal CPU (user+system from wait4 rusage, start-up subtracted) of the mtrun process alone; the simulator's CPU is in the mtbench process")
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// load is one capacity load: a conversation file and the clients.
type load struct {
	name    string
	clients int
	spec    convSpec
}

// capacityRun runs the capacity loads once with the mtrun of v, after a
// one-request run whose CPU (start-up) is subtracted.
func (b *bench) capacityRun(ctx context.Context, dir, url string, i int, v variant, loads []load, dur time.Duration) error {
	const sec = "capacity"
	p, _, err := b.mtrunWith(ctx, v, url, filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "one.records.jsonl"), nil, runOpts{})
	if err != nil {
		return err
	}
	base := p.CPU
	b.figs.add(sec, "mtrun start-up CPU (1 request, subtracted below)"+v.label, "ms", nil, ms(base))
	for _, l := range loads {
		args := []string{"--clients", fmt.Sprint(l.clients), "--loop", "--duration", dur.String(), "--think-time", "none"}
		load := loadAverage()
		p, recs, err := b.mtrunWith(ctx, v, url, filepath.Join(dir, l.name+".jsonl"), filepath.Join(dir, l.name+".records.jsonl"), args, runOpts{})
		if err != nil {
			return err
		}
		secs, failed := span(recs)
		if failed > 0 || len(recs) == 0 || secs <= 0 {
			return fmt.Errorf("%s load%s: %d records, %d failed", l.name, v.label, len(recs), failed)
		}
		n := 0
		for _, r := range recs {
			n += r.Chunks
		}
		cpu := max(p.CPU-base, 0)
		b.logf("run %d%s %s: %d requests, %d chunks in %.2fs; mtrun CPU %s (start-up %s), max RSS %d MiB; load %.2f",
			i+1, v.label, l.name, len(recs), n, secs, p.CPU.Round(time.Millisecond), base.Round(time.Millisecond), p.MaxRSS>>20, load)
		switch l.name {
		case "turns":
			b.figs.add(sec, fmt.Sprintf("turns/s (%d clients, 4-token answers)", l.clients)+v.label, "turns/s", v.tgt(atLeast(5000)), float64(len(recs))/secs)
			b.figs.add(sec, "mtrun CPU per request"+v.label, "µs", nil, us(cpu)/float64(len(recs)))
		case "turns32", "multi":
			if n != 32*len(recs) {
				return fmt.Errorf("%s load: %d chunks in %d turns, want 32 each", l.name, n, len(recs))
			}
			if l.name == "multi" {
				b.figs.add(sec, "mtrun CPU per turn, 4-turn conversations (100-token messages, 32 chunks)"+v.label, "ms", v.tgt(atMost(0.1)), ms(cpu)/float64(len(recs)))
				break
			}
			b.figs.add(sec, fmt.Sprintf("turns/s (%d clients, 32-token answers)", l.clients)+v.label, "turns/s", nil, float64(len(recs))/secs)
			b.figs.add(sec, "mtrun CPU per turn (32 chunks)"+v.label, "ms", v.tgt(atMost(0.1)), ms(cpu)/float64(len(recs)))
		case "chunks":
			b.figs.add(sec, fmt.Sprintf("streamed chunks/s (%d clients, 2,000-token answers)", l.clients)+v.label, "chunks/s", v.tgt(atLeast(200000)), float64(n)/secs)
			b.figs.add(sec, "mtrun CPU per chunk"+v.label, "µs", v.tgt(atMost(1)), us(cpu)/float64(n))
		case "multichunks":
			b.figs.add(sec, "mtrun CPU per chunk, 4-turn conversations (100-token messages, 2,000-token answers)"+v.label, "µs", v.tgt(atMost(1)), us(cpu)/float64(n))
		}
		b.figs.add(sec, "load average (1 min), "+l.name+" load"+v.label, "", nil, load)
	}
	return nil
}
