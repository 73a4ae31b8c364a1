package mtstats

import (
	"bufio"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

var genTestdata = flag.Bool("gen-testdata", false, "regenerate the record files of cmd/mtstats/testdata")

// TestGenTestdata writes the inputs of mtstats' golden tests when run with
// -gen-testdata.
func TestGenTestdata(t *testing.T) {
	if !*genTestdata {
		t.Skip("run with -gen-testdata to regenerate cmd/mtstats/testdata inputs")
	}
	dir := filepath.Join("..", "..", "cmd", "mtstats", "testdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := statstest.Records(statstest.Config{Seed: 100, Run: "base", Convs: 24, MaxTurns: 5, Warmup: 2, FailEvery: 23, ITL: true})
	tuned := statstest.Records(statstest.Config{Seed: 101, Run: "tuned", Convs: 24, MaxTurns: 5, Warmup: 2, ITL: true,
		Start: time.Date(2026, 5, 4, 11, 0, 0, 0, time.UTC)})
	shard1 := statstest.Records(statstest.Config{Seed: 102, Run: "base", Shard: 1, Convs: 8, MaxTurns: 3, NoCache: true})
	// shard1 as a version that keeps the client wait apart would have
	// written it: a wait of 0 to 300 ms before each send, with the same
	// start and lateness (so the turn was due that much earlier).
	shard1Wait := slices.Clone(shard1)
	for i := range shard1Wait {
		r := &shard1Wait[i]
		w := int64(i*7%5) * int64(75*time.Millisecond)
		r.ClientWaitNs = &w
		r.Scheduled = r.Scheduled.Add(-time.Duration(w))
		r.IntendedLatencyNs += w
	}
	for name, data := range map[string][]byte{
		"base.jsonl":        statstest.JSONL(t, base),
		"shard1-wait.jsonl": statstest.JSONL(t, shard1Wait),
		"tuned.jsonl":       statstest.JSONL(t, tuned),
		"shard1.jsonl":      statstest.JSONL(t, shard1),
		"tuned.parquet":     statstest.Parquet(t, tuned),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	genN   = flag.Int("gen-n", 0, "with -gen-out: number of records to generate")
	genOut = flag.String("gen-out", "", "write -gen-n generated records to this file (.parquet or JSONL) for load tests")
	genITL = flag.Bool("gen-itl", true, "with -gen-out: one ITL gap per output token after the first (false: none, as records of servers that stream one chunk)")
)

// TestGenLoad writes a large record file for memory and speed checks of
// the mtstats binary: go test ./internal/mtstats -run TestGenLoad -gen-n 10000000 -gen-out /tmp/big.parquet
func TestGenLoad(t *testing.T) {
	if *genOut == "" {
		t.Skip("needs -gen-out")
	}
	f, err := os.Create(*genOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var enc record.Encoder
	if strings.HasSuffix(*genOut, ".parquet") {
		enc = record.NewParquetEncoder(f)
	} else {
		w := bufio.NewWriterSize(f, 1<<20)
		defer w.Flush()
		enc = record.NewJSONEncoder(struct{ io.Writer }{w})
	}
	n, seed := 0, uint64(0)
	for n < *genN {
		seed++
		// Like a real run: one ITL gap per output token after the first,
		// about 3% of requests retried then failed, a warmup phase.
		recs := statstest.Records(statstest.Config{Seed: seed, Run: "load", Shard: int(seed), Convs: 10000, MaxTurns: 10,
			ITL: *genITL, FailEvery: 33, Warmup: 100,
			RequestsLimit: *genN - n, Start: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Hour)})
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		n += len(recs)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}
