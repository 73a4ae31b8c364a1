package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"
)

// retentionCostMax is the most mtstats' cache retention pass may add to
// the time of its default summary (issue 22): 20 %.
const retentionCostMax = 1.2

// retentionCost times mtstats' default summary (--format json) of the
// tools section's records (--stats-records of them, 20,000 in smoke mode;
// Parquet) with the cache retention pass and without it (--no-retention),
// in interleaved pairs whose order alternates, and publishes per pair the
// ratios of wall and CPU time (with / without, target ≤
// retentionCostMax), the extra max RSS, and each run's figures. Each
// pair's reports must be the same but for cache_retention.
func (b *bench) retentionCost(ctx context.Context, dir string) error {
	const sec = "retention-cost"
	const pre = "mtstats default summary, Parquet: "
	wallName, cpuName := pre+"wall with/without", pre+"CPU with/without"
	bin := b.bin("mtstats")
	if bin == "" {
		b.figs.na(sec, wallName, "ratio", atMost(retentionCostMax), "tool missing")
		b.figs.na(sec, cpuName, "ratio", atMost(retentionCostMax), "tool missing")
		return nil
	}
	n := pick(b, 20_000, b.statsRecords)
	input := filepath.Join(dir, "records.parquet")
	t0 := time.Now()
	err := writeRecordFiles(recordFiles{parquet: input}, recordSpec{n: n, seed: 1})
	defer os.RemoveAll(input)
	if err != nil {
		return err
	}
	b.logf("wrote %d records to %s in %v", n, input, time.Since(t0).Round(time.Millisecond))
	outs := map[bool]string{true: filepath.Join(dir, "retention-on.json"), false: filepath.Join(dir, "retention-off.json")}
	defer os.Remove(outs[true])
	defer os.Remove(outs[false])
	pairs := pick(b, 1, max(5, b.runs))
	for i := range pairs {
		got := map[bool]*proc{}
		for k := range 2 {
			// Pairs alternate which setting (with or without
			// --no-retention) runs first.
			on := (i+k)%2 == 0
			args := []string{"--format", "json", input}
			if !on {
				args = append([]string{"--no-retention"}, args...)
			}
			p, err := runProc(ctx, bin, args, runOpts{stdout: outs[on]})
			if err != nil {
				return err
			}
			got[on] = p
		}
		if err := sameButRetention(outs[true], outs[false]); err != nil {
			return err
		}
		with, without := got[true], got[false]
		b.logf("pair %d (load average %.2f): with %v CPU %v RSS %.0f MB | without %v CPU %v RSS %.0f MB",
			i+1, loadAverage(), with.Wall.Round(time.Millisecond), with.CPU.Round(time.Millisecond), float64(with.MaxRSS)/1e6,
			without.Wall.Round(time.Millisecond), without.CPU.Round(time.Millisecond), float64(without.MaxRSS)/1e6)
		b.figs.add(sec, wallName, "ratio", atMost(retentionCostMax), with.Wall.Seconds()/without.Wall.Seconds())
		b.figs.add(sec, cpuName, "ratio", atMost(retentionCostMax), with.CPU.Seconds()/without.CPU.Seconds())
		b.figs.add(sec, pre+"max RSS with − without", "MB", nil, float64(with.MaxRSS-without.MaxRSS)/1e6)
		for _, m := range []struct {
			what string
			p    *proc
		}{{"with", with}, {"without", without}} {
			b.figs.add(sec, pre+"wall "+m.what, "s", nil, m.p.Wall.Seconds())
			b.figs.add(sec, pre+"CPU "+m.what, "s", nil, m.p.CPU.Seconds())
			b.figs.add(sec, pre+"max RSS "+m.what, "MB", nil, float64(m.p.MaxRSS)/1e6)
		}
	}
	b.figs.note(sec, wallName, fmt.Sprintf(
		"mtstats --format json on %s records (Parquet) against the same binary with --no-retention, %d interleaved pairs (the order alternates); ratios per pair, medians over pairs; the reports are checked to differ only in cache_retention",
		thousands(int64(n)), pairs))
	return nil
}

// sameButRetention checks that two mtstats JSON reports are the same but
// for cache_retention, which the first has and the second has not.
func sameButRetention(with, without string) error {
	var docs [2]map[string]json.RawMessage
	for k, path := range []string{with, without} {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &docs[k]); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if _, ok := docs[0]["cache_retention"]; !ok {
		return fmt.Errorf("%s: no cache_retention", with)
	}
	if _, ok := docs[1]["cache_retention"]; ok {
		return fmt.Errorf("%s: cache_retention with --no-retention", without)
	}
	delete(docs[0], "cache_retention")
	if !maps.EqualFunc(docs[0], docs[1], func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		return fmt.Errorf("%s and %s differ in more than cache_retention", with, without)
	}
	return nil
}
