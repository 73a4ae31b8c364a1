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
)

// Retention section: issue 22's timing-based checks of mtstats' cache
// retention analysis, against a two-tier simulator whose capacities are
// known: a local LRU of retentionLocal tokens whose evicted blocks go to
// an offload LRU of retentionOffload tokens, with realistic timing (TTFT
// 20 ms + 0.05 ms per computed prompt token + 0.005 ms per token loaded
// from the offload tier, 1 ms per output token).
const (
	retentionLocal   = 30000
	retentionOffload = 120000
)

// retentionReport is the part of mtstats' JSON report this section reads.
type retentionReport struct {
	Retention *struct {
		Basis    string   `json:"basis"`
		Capacity *float64 `json:"capacity_tokens"`
		Tiers    *struct {
			Local *float64 `json:"local_capacity_tokens"`
			Total *float64 `json:"total_capacity_tokens"`
		} `json:"tiers"`
		Note string `json:"note"`
	} `json:"cache_retention"`
}

// retention runs mtrun with random conversation sampling over more active
// conversations than both tiers hold, once with cached_tokens in the
// responses (the tiers, from the server's local and external hit
// counters) and once with them hidden (the TTFT basis), and reports how
// far mtstats' capacities are from the configured ones.
func (b *bench) retention(ctx context.Context, dir string) error {
	const sec = "retention"
	in := filepath.Join(dir, "convs.jsonl")
	spec := convSpec{n: pick(b, 120, 480), turns: 6, userWords: 150, wordsMax: 300, output: 100, seed: 22}
	if err := writeConvs(in, spec); err != nil {
		return err
	}
	total := float64(retentionLocal + retentionOffload)
	errPct := func(got *float64, want float64) float64 {
		if got == nil {
			return math.NaN()
		}
		return 100 * math.Abs(*got-want) / want
	}
	for i := range b.runs {
		for _, hide := range []bool{false, true} {
			cfg := sim.Config{TTFTBase: 20 * time.Millisecond, PrefillPerToken: 50 * time.Microsecond, OffloadLoadPerToken: 5 * time.Microsecond,
				DecodePerToken: time.Millisecond, CacheTokens: retentionLocal, OffloadTokens: retentionOffload, BlockSize: 16, HideCachedTokens: hide}
			rep, wall, err := b.retentionRun(ctx, cfg, in, filepath.Join(dir, fmt.Sprintf("records-%d-%v.jsonl", i, hide)))
			if err != nil {
				return err
			}
			r := rep.Retention
			if r == nil {
				return fmt.Errorf("mtstats reported no cache_retention")
			}
			tiers := "none"
			if r.Tiers != nil {
				tiers = "local " + fmtPtr(r.Tiers.Local) + ", total " + fmtPtr(r.Tiers.Total)
			}
			b.logf("run %d, cached_tokens hidden %v: basis %s, capacity %s, tiers %s, in %s %s", i+1, hide, r.Basis, fmtPtr(r.Capacity), tiers, wall.Round(100*time.Millisecond), r.Note)
			if hide {
				if r.Basis != "ttft" {
					return fmt.Errorf("cached_tokens hidden: basis %q, want ttft", r.Basis)
				}
				b.figs.add(sec, fmt.Sprintf("capacity from TTFT (cached_tokens hidden), error against %s", thousands(int64(total))), "%", atMost(15), errPct(r.Capacity, total))
				continue
			}
			var local, tot *float64
			if r.Tiers != nil {
				local, tot = r.Tiers.Local, r.Tiers.Total
			}
			b.figs.add(sec, fmt.Sprintf("local tier capacity, error against %s", thousands(retentionLocal)), "%", atMost(15), errPct(local, retentionLocal))
			b.figs.add(sec, fmt.Sprintf("total capacity, error against %s", thousands(int64(total))), "%", atMost(15), errPct(tot, total))
			b.figs.add(sec, "run wall time", "s", nil, wall.Seconds())
		}
	}
	b.figs.note(sec, fmt.Sprintf("local tier capacity, error against %s", thousands(retentionLocal)),
		fmt.Sprintf("mtrun --clients 4 --active 200 --conversation-sampling random over %d conversations of 6 turns, against the simulator with cache=%d,offload=%d,block=16, ttft=20ms, prefill=0.05ms, offload-load=0.005ms, decode=1ms; mtstats --format json: cache_retention.tiers (the server's local and external prefix-cache hit counters, scraped every 200 ms)", spec.n, retentionLocal, retentionOffload))
	b.figs.note(sec, fmt.Sprintf("capacity from TTFT (cached_tokens hidden), error against %s", thousands(int64(total))),
		"the same run with hide-cached=true: cache_retention.basis ttft, capacity_tokens against both tiers together (a load from the offload tier costs a tenth of a prefill)")
	return b.retentionSweep(ctx, dir)
}

// retentionRun runs mtrun against a simulator of cfg and mtstats on the
// records, and returns mtstats' report and mtrun's wall time.
func (b *bench) retentionRun(ctx context.Context, cfg sim.Config, convs, records string) (*retentionReport, time.Duration, error) {
	h, err := startSim(cfg, false)
	if err != nil {
		return nil, 0, err
	}
	defer h.close()
	args := []string{"--tokenizer", "none", "--clients", "4", "--active", "200", "--conversation-sampling", "random",
		"--seed", "1", "--metrics-interval", "200ms"}
	t0 := time.Now()
	if _, _, err := b.mtrunRun(ctx, h.URL, convs, records, args, runOpts{}); err != nil {
		return nil, 0, err
	}
	wall := time.Since(t0)
	bin := b.bin("mtstats")
	if bin == "" {
		return nil, 0, fmt.Errorf("mtstats binary missing from --bin")
	}
	out := records + ".stats.json"
	if _, err := runProc(ctx, bin, []string{"--format", "json", records}, runOpts{stdout: out}); err != nil {
		return nil, 0, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, 0, err
	}
	var rep retentionReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, 0, fmt.Errorf("%s: %v", out, err)
	}
	return &rep, wall, nil
}

func fmtPtr(x *float64) string {
	if x == nil {
		return "null"
	}
	return fmt.Sprintf("%.0f", *x)
}
