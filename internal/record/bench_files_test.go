package record

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtkit/mtkit/internal/cputime"
)

// benchColumnSets are the field selections BenchmarkDecodeFiles reads:
// every field; what mtstats' default summary reads (every field but the
// ones it never reports, as internal/mtstats/columns.go lists them); and
// what a per-turn TTFT table reads (mtstats --by turn --only ttft).
var benchColumnSets = []struct {
	name  string
	names []string // nil with all: every field
	all   bool
}{
	{name: "all", all: true},
	{name: "summary", names: []string{"shard", "seq", "conversation_id", "turn", "phase", "segment", "segments",
		"host", "scheduled", "ttft_ns", "tpot_ns", "itl_ns", "latency_ns", "intended_latency_ns", "lateness_ns",
		"think_planned_ns", "think_actual_ns", "prompt_tokens", "completion_tokens", "cached_tokens",
		"client_prompt_tokens", "client_completion_tokens", "input_messages", "chunks", "error_class",
		"retried", "backend", "stage", "stage_load"}},
	{name: "byturn", names: []string{"turn", "ttft_ns", "phase", "error_class", "retried"}},
}

// benchFiles returns record files to decode: MTKIT_DECODE_BENCH_DIR's
// records.jsonl, records.parquet and records-no-itl.parquet when set (as
// mtbench writes them), else the same three made from genBenchRecords.
func benchFiles(b *testing.B) map[string]string {
	b.Helper()
	names := []string{"records.jsonl", "records.parquet", "records-no-itl.parquet"}
	dir := os.Getenv("MTKIT_DECODE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
		recs := genBenchRecords(20000)
		writeBenchFile(b, filepath.Join(dir, names[0]), recs)
		writeBenchFile(b, filepath.Join(dir, names[1]), recs)
		for i := range recs {
			recs[i].ITLNs = nil
		}
		writeBenchFile(b, filepath.Join(dir, names[2]), recs)
	}
	out := map[string]string{}
	for _, n := range names {
		out[n] = filepath.Join(dir, n)
	}
	return out
}

func writeBenchFile(b *testing.B, path string, recs []Record) {
	enc, err := Create(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	encodeAll(b, enc, recs)
}

// genBenchRecords are genRecords with as many ITL gaps as mtbench's
// realistic records (one per output token, about 70 on average).
func genBenchRecords(n int) []Record {
	recs := genRecords(3, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range recs {
		if recs[i].ITLNs == nil {
			continue
		}
		itl := make([]int64, 10+rng.IntN(120))
		for k := range itl {
			itl[k] = int64(8e6 + rng.IntN(8e6))
		}
		recs[i].ITLNs = itl
	}
	return recs
}

// BenchmarkDecodeFiles reads record files through Files, as mtstats does,
// with every field and with the selections of benchColumnSets, reporting
// records/s and records per CPU-second. Set MTKIT_DECODE_BENCH_DIR to
// read mtbench's files instead of generated ones:
//
//	go test -run '^$' -bench DecodeFiles -benchmem ./internal/record/
func BenchmarkDecodeFiles(b *testing.B) {
	files := benchFiles(b)
	for _, file := range []string{"records.jsonl", "records.parquet", "records-no-itl.parquet"} {
		for _, set := range benchColumnSets {
			var cols *Columns
			if !set.all {
				var err error
				if cols, err = NewColumns(set.names...); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(file+"/"+set.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cputime.Process()
				n := 0
				for b.Loop() {
					fs := &Files{Paths: []string{files[file]}, Columns: cols}
					for fs.Scan() {
						if err := fs.Err(); err != nil {
							b.Fatal(err)
						}
						n++
					}
					if err := fs.Err(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(n)/(cputime.Process()-cpu).Seconds(), "records/cpu-s")
			})
		}
	}
}
