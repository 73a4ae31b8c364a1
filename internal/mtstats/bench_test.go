package mtstats

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mtkit/mtkit/internal/cputime"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// BenchmarkRun measures end-to-end summary throughput (read, decode,
// accumulate, sort, render) in records per second, for JSONL and Parquet,
// and the heap kept per record.
func BenchmarkRun(b *testing.B) {
	recs := statstest.Records(statstest.Config{Seed: 1, Run: "bench", Convs: 20000, MaxTurns: 10, ITL: false})
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"jsonl", statstest.JSONL(b, recs)},
		{"parquet", statstest.Parquet(b, recs)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := writeTemp(b, "r."+tc.name, tc.data)
			b.SetBytes(int64(len(tc.data)))
			cpu := cputime.Process()
			for b.Loop() {
				if err := Run(context.Background(), Options{Inputs: []string{p}, Out: io.Discard, Err: io.Discard}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(b.N*len(recs))/(cputime.Process()-cpu).Seconds(), "records/cpu-s")
		})
	}
	b.Run("heap", func(b *testing.B) {
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c, _ := newCollector(&Options{Err: io.Discard}, nil, nil)
			for i := range recs {
				c.all.Add(&recs[i], true)
				c.dedup.Seen(recs[i].Key())
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(recs)), "heap-B/record")
			runtime.KeepAlive(c)
		}
	})
}

// BenchmarkByTurnOnly is mtstats --format json --by turn --only ttft (the
// per-turn TTFT question mtbench puts to mtstats and DuckDB) on a Parquet
// file, or on MTKIT_DECODE_BENCH_DIR's records.parquet when set (the 2 M
// records mtbench writes), in records per CPU-second:
//
//	go test -run '^$' -bench ByTurnOnly -cpu 1,2 ./internal/mtstats/
func BenchmarkByTurnOnly(b *testing.B) {
	path := filepath.Join(os.Getenv("MTKIT_DECODE_BENCH_DIR"), "records.parquet")
	n := 2_000_000
	if os.Getenv("MTKIT_DECODE_BENCH_DIR") == "" {
		recs := statstest.Records(statstest.Config{Seed: 1, Run: "bench", Convs: 20000, MaxTurns: 10, ITL: true})
		path, n = writeTemp(b, "r.parquet", statstest.Parquet(b, recs)), len(recs)
	}
	cpu := cputime.Process()
	for b.Loop() {
		o := Options{Inputs: []string{path}, Out: io.Discard, Err: io.Discard, Format: report.FormatJSON, By: "turn", Only: "ttft"}
		if err := Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.N*n)/(cputime.Process()-cpu).Seconds(), "records/cpu-s")
}
