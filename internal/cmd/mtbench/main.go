// Command mtbench is mtkit's self-benchmark: it measures how much load
// mtrun can generate and how faithfully it records what it measures, by
// running the real mtrun binary against the simulator (internal/sim)
// served on loopback from this process, and measures the other tools'
// throughput. It prints every figure next to its target with PASS or
// FAIL; medians over --runs repetitions.
//
// Sections:
//
//	capacity  turns/s, streamed chunks/s and mtrun's CPU time per request
//	          and per chunk (from the child's rusage) against a
//	          zero-latency simulator
//	fidelity  |recorded − true| of TTFT and ITL at 1, 100 and 1,000
//	          concurrent streams, the truth being the simulator's own
//	          receive and send stamps
//	schedule  open-loop achieved vs asked rate and lateness at 50, 500
//	          and 2,000 new conversations/s
//	scale     max RSS and goroutines of mtrun with 10,000 concurrent
//	          conversations of 20 turns with think time
//	tools     mtgen, mtconvert, mtstats and tokenizer throughput;
//	          mtconvert beside vLLM's converter (vllmconv.go), and
//	          mtstats beside DuckDB on the same realistic records
//	          (records.go), at 2 cores and at 1, every number of both
//	          answers checked to agree (duckdb.go; figures in the
//	          "vs DuckDB" section of the report)
//	retention-cost
//	          the time mtstats' cache retention pass adds to its default
//	          summary of the tools section's Parquet records (retcost.go)
//
// Usage (scripts/bench.sh builds the binaries and runs it):
//
//	mtbench --bin DIR [--smoke] [--runs N] [--only capacity,fidelity,...] [--json FILE]
//	        [--stats-records N] [--duckdb scripts/duckdb/duckdb.mjs] [--vllm-convert FILE]
//
// Exit status: 0 when every figure was measured and (unless --smoke) met
// its target, 3 when a target was missed, 1 on an error (mtstats and
// DuckDB disagreeing is an error, in smoke mode too).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == measureArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mtbench:", err)
	}
	os.Exit(code)
}
