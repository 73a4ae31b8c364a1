package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Exit codes.
const (
	exitOK     = 0
	exitError  = 1
	exitUsage  = 2
	exitMissed = 3 // a target was not met
)

// sections in the order they run.
var sections = []string{"capacity", "fidelity", "schedule", "trace", "scale", "tools", "retention-cost", "sweep", "retention"}

// bench is one benchmark run's settings and its collected figures.
type bench struct {
	smoke  bool
	runs   int
	binDir string
	// baseBin holds an mtrun built from an earlier commit: the trace, CPU
	// and 1,000-stream figures are measured with it too ("[before]").
	baseBin   string
	work      string
	tokenizer string // tokenizer.json for the tools section ("" = none found)
	// duckdbScript is scripts/duckdb/duckdb.mjs, run with node.
	duckdbScript string
	// requireDuckDB makes a DuckDB that cannot run an error, not n/a.
	requireDuckDB bool
	// vllmConvert is vLLM's convert_sharegpt_to_openai.py ("" = not there).
	vllmConvert string
	// statsRecords is the size of the mtstats input in a full run.
	statsRecords int
	log          io.Writer
	figs         *figures
}

// run is main with injected streams; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("mtbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		b        bench
		only     string
		jsonOut  string
		markdown bool
	)
	fs.BoolVar(&b.smoke, "smoke", false, "short run that checks the benchmark works, not the timings (no PASS/FAIL exit status)")
	fs.IntVar(&b.runs, "runs", 3, "repetitions of each measurement; figures are medians")
	fs.StringVar(&b.binDir, "bin", "", "`DIR` holding the built mtrun, mtgen, mtconvert and mtstats binaries")
	fs.StringVar(&b.baseBin, "base-bin", "", "`DIR` holding an mtrun built from an earlier commit: the trace, CPU and 1,000-stream figures are measured with it too, interleaved, labelled [before] (scripts/bench.sh builds it)")
	fs.StringVar(&b.work, "work", "", "scratch `DIR` for generated files (default: a new temporary directory, removed at the end)")
	fs.StringVar(&b.tokenizer, "tokenizer-json", "", "Qwen `tokenizer.json` for the mtgen and tokenizer figures (scripts/fixtures.sh)")
	fs.StringVar(&b.duckdbScript, "duckdb", "scripts/duckdb/duckdb.mjs", "`SCRIPT` that runs SQL in DuckDB (node; scripts/fixtures.sh installs DuckDB)")
	fs.BoolVar(&b.requireDuckDB, "require-duckdb", false, "fail, instead of reporting n/a, when DuckDB cannot run (bench.sh sets it when scripts/fixtures.sh succeeded)")
	fs.StringVar(&b.vllmConvert, "vllm-convert", defaultVLLMConvert(), "vLLM's convert_sharegpt_to_openai.py `FILE` (scripts/vllm/README.md), run with /usr/bin/python3")
	fs.IntVar(&b.statsRecords, "stats-records", 2_000_000, "records in the mtstats input of a full run (the issue's figure is 10,000,000: about 8 GB of JSONL, several minutes to write)")
	fs.StringVar(&only, "only", "", "comma-separated `SECTIONS` to run: "+strings.Join(sections, ","))
	fs.StringVar(&jsonOut, "json", "", "also write the figures as JSON to `FILE`")
	fs.BoolVar(&markdown, "markdown", false, "print the table as Markdown (for docs/performance.md)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, nil
	}
	if fs.NArg() > 0 {
		return exitUsage, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if b.binDir == "" {
		return exitUsage, errors.New("--bin: missing (the directory of the built mtrun binary)")
	}
	if b.smoke {
		b.runs = 1
	}
	if b.runs < 1 {
		return exitUsage, fmt.Errorf("--runs %d: want at least 1", b.runs)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		found := false
		for _, k := range sections {
			found = found || k == s
		}
		if !found {
			return exitUsage, fmt.Errorf("--only: unknown section %q (want %s)", s, strings.Join(sections, ","))
		}
		want[s] = true
	}
	if b.work == "" {
		dir, err := os.MkdirTemp("", "mtbench-")
		if err != nil {
			return exitError, err
		}
		defer os.RemoveAll(dir)
		b.work = dir
	}
	b.log = stderr
	b.figs = newFigures()
	host := describeHost()
	fmt.Fprintf(stderr, "mtbench: %s; runs=%d smoke=%v\n", host, b.runs, b.smoke)
	started := time.Now()
	var errs []error
	for _, s := range sections {
		if len(want) > 0 && !want[s] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		fmt.Fprintf(stderr, "mtbench: %s ...\n", s)
		dir := filepath.Join(b.work, s)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return exitError, err
		}
		if err := b.section(ctx, s, dir); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s, err))
			fmt.Fprintf(stderr, "mtbench: %s: %v\n", s, err)
		}
		fmt.Fprintf(stderr, "mtbench: %s done in %s\n", s, time.Since(t0).Round(100*time.Millisecond))
	}
	elapsed := time.Since(started)
	hostEnd := describeHost()
	rep := b.figs.report(!b.smoke)
	rep.Host, rep.HostEnd, rep.Elapsed, rep.Smoke, rep.Runs = host, hostEnd, elapsed.Round(time.Second).String(), b.smoke, b.runs
	if markdown {
		rep.markdown(stdout)
	} else {
		rep.text(stdout)
	}
	if jsonOut != "" {
		if err := rep.writeJSON(jsonOut); err != nil {
			errs = append(errs, err)
		}
	}
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	if err := errors.Join(errs...); err != nil {
		return exitError, err
	}
	if !b.smoke && rep.Failed > 0 {
		return exitMissed, fmt.Errorf("%d of %d targets not met", rep.Failed, rep.Checked)
	}
	return exitOK, nil
}

func (b *bench) section(ctx context.Context, name, dir string) error {
	switch name {
	case "capacity":
		return b.capacity(ctx, dir)
	case "fidelity":
		return b.fidelity(ctx, dir)
	case "schedule":
		return b.schedule(ctx, dir)
	case "trace":
		return b.trace(ctx, dir)
	case "scale":
		return b.scale(ctx, dir)
	case "tools":
		return b.tools(ctx, dir)
	case "retention-cost":
		return b.retentionCost(ctx, dir)
	case "sweep":
		return b.sweep(ctx, dir)
	case "retention":
		return b.retention(ctx, dir)
	}
	return fmt.Errorf("unknown section %q", name)
}

// logf writes a progress line to stderr.
func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "mtbench:   "+format+"\n", args...)
}

// bin returns the path of a built tool, or "" when it is not there.
func (b *bench) bin(name string) string {
	p := filepath.Join(b.binDir, name)
	if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// pick returns the smoke or the full value.
func pick[T any](b *bench, smoke, full T) T {
	if b.smoke {
		return smoke
	}
	return full
}
