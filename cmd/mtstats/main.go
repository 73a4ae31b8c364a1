// Command mtstats summarises mtrun request records (JSONL or Parquet, many
// files or stdin, merged): the vLLM multi-turn summary, per-turn and
// per-conversation views, SLOs and goodput, comparisons, and table,
// markdown, JSON, CSV, HTML and XLSX reports. See docs/mtmtstats.md.
package main

import (
	"context"
	"errors"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/mtstats"
	"github.com/mtkit/mtkit/internal/report"
)

const usageText = `mtstats [options] [file|label=file|- ...]

Arguments:
   Record files (JSONL, .gz, .zst or Parquet, sniffed), "-" for stdin,
   "label=file" to name an input, a directory (its record files) or a
   quoted glob. With no arguments, stdin is read.
   Options may come before or after the files; "--" ends them.

Examples:
   mtrun ... | tee records.jsonl | mtstats
   mtstats --by turn records.jsonl
   mtstats --format json shard-*.jsonl > summary.json
   mtstats records/            # the segments of a split run, merged
   mtstats --slo 'ttft_p95<=2s,itl_p99<=50ms' --check records.parquet
   mtstats --compare base=a.jsonl new=b.jsonl
   mtstats --to - --where 'turn>0 && error_class==""' records.jsonl.zst
   mtstats --to records.parquet records.jsonl
   mtstats --html report.html --xlsx report.xlsx records.jsonl`

// memoryLimit is the default soft heap limit.
const memoryLimit = 3 << 29 // 1.5 GiB

func main() {
	// The samples are pointer-free and live to the end. The garbage
	// collector runs at its default pace until the heap nears a soft limit
	// of 1.5 GiB (unless GOMEMLIMIT is set), then as often as needed to stay
	// under it: fast for ordinary inputs, bounded for 10 M records.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(run(command.OSStreams(), os.Args))
}

// flags binds mtstats's flags to o.
func flags(o *mtstats.Options) []cli.Flag {
	const catReport, catSLO = "Report:", "Service-level objectives:"
	every := cliflag.Duration("every", &o.Every, "print the report of what was read so far every `INTERVAL` (live pipes)")
	every.Category = catReport
	return []cli.Flag{
		&cli.StringFlag{Name: "where", Destination: &o.Where, Category: cliflag.CatInput, Usage: "keep records matching `EXPR`: field op value [&& ...], ops == != < <= > >="},
		&cli.BoolFlag{Name: "include-warmup", Destination: &o.IncludeWarmup, DisableDefaultText: true, Category: cliflag.CatInput, Usage: "count warmup records too"},
		cliflag.Strict(&o.Strict),

		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Destination: &o.Format, Category: catReport, Usage: "report `FORMAT`: table, markdown, json, csv, or llm-d (llm-d-benchmark's benchmark report, one per stage)"},
		&cli.StringFlag{Name: "by", Destination: &o.By, Category: catReport, Usage: "also report per `GROUP`: turn (user turn: the conversation's request number, from 0), conversation, client, phase, run, file or a record field"},
		&cli.StringFlag{Name: "by-detail", Value: report.ByTable, Destination: &o.ByDetail, Category: catReport, Usage: "with --by, what each group shows: `DETAIL` table (one row per group: requests, failed, TTFT, ITL and latency quantiles, input tokens, cache hit) or full (the whole report per group; implied by --compare, --html, --xlsx and --user-gaps)"},
		&cli.StringFlag{Name: "only", Destination: &o.Only, Category: catReport, Usage: "report only `METRICS` (comma-separated: ttft, tpot, itl, latency, input_num_turns (messages sent, vLLM's name), input_num_tokens, output_num_tokens, output_num_chunks, intended_latency, lateness, client_wait, think_planned, think_actual) with the request counts, runtime and request rate, reading only the fields they need: e.g. --by turn --only ttft"},
		&cli.BoolFlag{Name: "compare", Destination: &o.Compare, DisableDefaultText: true, Category: catReport, Usage: "show each input (label=file) side by side with ratios to the first"},
		&cli.StringFlag{Name: "html", Destination: &o.HTML, Category: catReport, Usage: "also write a self-contained HTML report to `FILE`"},
		&cli.StringFlag{Name: "xlsx", Destination: &o.XLSX, Category: catReport, Usage: "also write an Excel workbook to `FILE`"},
		&cli.StringFlag{Name: "xlsx-layout", Value: mtstats.XLSXMtstats, Destination: &o.XLSXLayout, Category: catReport, Usage: "--xlsx's `LAYOUT`: mtstats (the report's figures, one row per record), vllm (vLLM's --excel-output: describe tables of its request columns, see --warmup-percentages) or vllm-verbose (also time_between_user_turns_sec, as vLLM's --verbose)"},
		&cli.GenericFlag{Name: "xlsx-param", Value: &o.XLSXParams, Category: catReport, Usage: "with --xlsx-layout vllm: a parameter `NAME=VALUE` of the Summary sheet's first rows, in order (repeatable; VALUE is read as JSON when it is a number, a quoted string or null, else as text; warmup_runtime_sec goes beside each block's runtime)"},
		withCategory(cliflag.WarmupPercentages(&o.WarmupPercentages, ""), catReport),
		every,
		&cli.BoolFlag{Name: "user-gaps", Destination: &o.UserGaps, DisableDefaultText: true, Category: catReport, Usage: "also describe the time between consecutive requests (user turns) of each client (user), intended and realised: user_gap_intended_ms, user_gap_ms (compare with mtrun --user-gap; per user with --by client)"},
		&cli.BoolFlag{Name: "no-retention", Destination: &o.NoRetention, DisableDefaultText: true, Category: catReport, Usage: "skip the cache retention analysis (cache_retention), which costs some time and memory per record; --only skips it too"},
		cliflag.MetricsFile(&o.Metrics, "the *.metrics.jsonl next to a single records file"),
		cliflag.NoMetrics(&o.NoMetrics),

		withCategory(cliflag.SLO(&o.SLO), catSLO),
		&cli.BoolFlag{Name: "check", Destination: &o.Check, DisableDefaultText: true, Category: catSLO, Usage: "exit with status 3 when an --slo objective is not met"},
		withCategory(cliflag.Capacity(&o.Capacity), catSLO),
		&cli.Float64Flag{Name: "min-capacity", Destination: &o.MinCapacity, Category: catSLO, Usage: "with --capacity: exit with status 3 when the capacity judged from the records is below `N`"},

		&cli.StringFlag{Name: "to", Destination: &o.To, Category: cliflag.CatOutput, Usage: "no report: write the records that pass --where to `FILE` (- is stdout; .parquet, .jsonl, .jsonl.gz, .jsonl.zst)"},

		cliflag.BoolAlias("records", "to", "-", "use --to - (--records FILE names mtrun's records output)"),
		cliflag.Alias("metrics", "metrics-file", "use --metrics-file (mtrun's name for the same file)"),
	}
}

// withCategory puts a shared flag under one of mtstats's headings.
func withCategory(f *cli.StringFlag, category string) *cli.StringFlag {
	f.Category = category
	return f
}

// run is mtstats with injected streams; it returns the exit code.
func run(s command.Streams, args []string) int {
	app := command.NewApp("mtstats", "summarise LLM benchmark request records", s)
	app.UsageText = usageText
	var o mtstats.Options
	app.Flags = flags(&o)
	app.Action = func(c *cli.Context) error {
		stop, abort, release := command.Interrupts(c.Context, s.Signals)
		defer release()
		o.Inputs, o.Stdin, o.Out, o.Err, o.Stop = c.Args().Slice(), s.In, s.Out, s.Err, stop.Done()
		o.Version = command.Version()
		err := mtstats.Run(abort, o)
		var usage *mtstats.UsageError
		switch {
		case errors.As(err, &usage):
			return command.Exit(command.ExitUsage, err)
		case errors.Is(err, mtstats.ErrNoRecords):
			return command.Exit(command.ExitFailure, nil) // the reason is on stderr
		case errors.Is(err, mtstats.ErrCheckFailed):
			return command.Exit(command.ExitCheckFailed, err)
		case errors.Is(err, mtstats.ErrInterrupted):
			return command.Exit(command.ExitInterrupted, nil)
		}
		return err
	}
	return command.Run(context.Background(), app, args)
}
