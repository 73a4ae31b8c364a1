// Command mtstats summarises mtrun request records (JSONL or Parquet, many
// files or stdin, merged): the vLLM multi-turn summary, per-turn and
// per-conversation views, SLOs and goodput, comparisons, and table,
// markdown, JSON, CSV, HTML and XLSX reports. See docs/mtstats.md.
package main

import (
	"context"
	"errors"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/stats"
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
   mtstats --records --where 'turn>0 && error_class==""' records.jsonl.zst
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

// run is mtstats with injected streams; it returns the exit code.
func run(s command.Streams, args []string) int {
	app := command.NewApp("mtstats", "summarise LLM benchmark request records", s)
	app.UsageText = usageText
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "report format: table, markdown, json or csv"},
		&cli.StringFlag{Name: "by", Usage: "also report per group: turn, conversation, client, phase, run, file or a record field"},
		&cli.BoolFlag{Name: "include-warmup", Usage: "count warmup records too"},
		&cli.BoolFlag{Name: "strict", Usage: "stop at the first malformed line"},
		&cli.StringFlag{Name: "where", Usage: "keep records matching `EXPR`: field op value [&& ...], ops == != < <= > >="},
		&cli.StringFlag{Name: "slo", Usage: "service-level objectives, e.g. 'ttft_p95<=2s,itl_p99<=50ms,turn0:ttft_p99<=5s'"},
		&cli.BoolFlag{Name: "check", Usage: "exit with status 3 when an --slo objective is not met"},
		&cli.BoolFlag{Name: "compare", Usage: "show each input (label=file) side by side with ratios to the first"},
		&cli.BoolFlag{Name: "records", Usage: "write the records that pass --where to stdout as JSONL instead of a report"},
		&cli.StringFlag{Name: "to", Usage: "write the records that pass --where to `FILE` (.parquet, .jsonl, .jsonl.gz, .jsonl.zst)"},
		&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report to `FILE`"},
		&cli.StringFlag{Name: "xlsx", Usage: "also write an Excel workbook to `FILE`"},
		&cli.DurationFlag{Name: "every", Usage: "print the report of what was read so far every `INTERVAL` (live pipes)"},
		&cli.StringFlag{Name: "capacity", Usage: "a sweep's capacity JSON (mtrun --capacity) `FILE`: judge the records' stages again at its levels, with --slo or its objectives, and report the capacity"},
		&cli.Float64Flag{Name: "min-capacity", Usage: "with --capacity: exit with status 3 when the capacity judged from the records is below `N`"},
		&cli.BoolFlag{Name: "user-gaps", Usage: "also describe the time between consecutive turns of each client (user), intended and realised: user_gap_intended_ms, user_gap_ms (compare with mtrun --user-gap; per user with --by client)"},
		&cli.StringFlag{Name: "metrics", Usage: "server metrics series `FILE` written by mtrun (default: the *.metrics.jsonl next to a single records file)"},
		&cli.BoolFlag{Name: "no-metrics", Usage: "do not read the server metrics series"},
	}
	app.Action = func(c *cli.Context) error {
		stop, abort, release := command.Interrupts(c.Context, s.Signals)
		defer release()
		err := stats.Run(abort, stats.Options{
			Inputs: c.Args().Slice(), Stdin: s.In, Out: s.Out, Err: s.Err,
			Format: c.String("format"), By: c.String("by"), IncludeWarmup: c.Bool("include-warmup"),
			Strict: c.Bool("strict"), Where: c.String("where"), SLO: c.String("slo"), Check: c.Bool("check"),
			Compare: c.Bool("compare"), Records: c.Bool("records"), To: c.String("to"),
			HTML: c.String("html"), XLSX: c.String("xlsx"), Every: c.Duration("every"), UserGaps: c.Bool("user-gaps"),
			Metrics: c.String("metrics"), NoMetrics: c.Bool("no-metrics"),
			Capacity: c.String("capacity"), MinCapacity: c.Float64("min-capacity"),
			Stop: stop.Done(),
		})
		var usage *stats.UsageError
		switch {
		case errors.As(err, &usage):
			return command.Exit(command.ExitUsage, err)
		case errors.Is(err, stats.ErrNoRecords):
			return command.Exit(command.ExitFailure, nil) // the reason is on stderr
		case errors.Is(err, stats.ErrCheckFailed):
			return command.Exit(command.ExitCheckFailed, err)
		case errors.Is(err, stats.ErrInterrupted):
			return command.Exit(command.ExitInterrupted, nil)
		}
		return err
	}
	return command.Run(context.Background(), app, args)
}
