// Command mtgen writes synthetic multi-turn conversations as JSONL for
// mtrun: turn counts, prompt and answer lengths and think times from
// seeded distributions, prompts cut from a corpus to exactly the requested
// number of tokens. It reads vLLM's generate_conversations JSON config.
// See docs/mtgen.md.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/dist"
	"github.com/mtkit/mtkit/internal/gen"
	"github.com/mtkit/mtkit/internal/inferenceperf"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/tokenize"
)

const usageText = `mtgen [options]

Writes one conversation per line (JSONL) to stdout or -o FILE. --turns
counts messages, as vLLM's num_turns does: a user message and its answer
are two, so --turns constant:6 makes 3 requests (user turns) per
conversation. Flags override the --config file's settings.

` + dist.Syntax + `

Examples:
   mtgen --num-conversations 100 --turns uniform:4:10 --input-tokens lognormal:avg=500,median_ratio=0.8,max=2000 \
         --output-tokens constant:100 --system-prefix-tokens 1000 --prefix-tokens 500 \
         --think-time exponential:mean=2s > convs.jsonl
   mtgen --config generate_multi_turn.json --tokenizer ./Llama-3.1-8B/ -o convs.jsonl.zst
   mtgen --num-conversations 1000 --prefix-groups 8 --system-prefix-tokens 2000 --stats | mtrun ...`

func main() {
	os.Exit(run(command.OSStreams(), os.Args))
}

// options are mtgen's flags.
type options struct {
	gen               gen.Overrides
	config, tokenizer string
	output, textFiles string
	seed              uint64
	workers           int
}

// flags binds mtgen's flags to o.
func flags(o *options) []cli.Flag {
	g := &o.gen
	thinkTime := cliflag.ThinkTime(&g.ThinkTime, "none")
	thinkTime.Category = catShape
	return []cli.Flag{
		cliflag.Config(&o.config),
		&cli.StringFlag{Name: "text-files", Destination: &o.textFiles, Category: cliflag.CatInput, DefaultText: "the embedded public-domain corpus", Usage: "comma-separated corpus `FILES`"},
		cliflag.Tokenizer(&o.tokenizer, tokenize.Default),

		&cli.IntFlag{Name: "num-conversations", Destination: &g.NumConversations, DefaultText: "100", Category: catShape, Usage: "write `N` conversations"},
		&cli.StringFlag{Name: "turns", Destination: &g.Turns, DefaultText: "uniform:12:18", Category: catShape, Usage: "messages per conversation `DIST` (vLLM's num_turns: user and assistant messages), rounded up to even, at least 2"},
		&cli.StringFlag{Name: "input-tokens", Destination: &g.InputTokens, DefaultText: "uniform:120:160", Category: catShape, Usage: "tokens per user message `DIST`; the first includes the prefixes"},
		&cli.StringFlag{Name: "output-tokens", Destination: &g.OutputTokens, DefaultText: "uniform:80:120", Category: catShape, Usage: "target tokens per assistant reply `DIST`"},
		&cli.StringFlag{Name: "system-prefix-tokens", Aliases: []string{"common-prefix-tokens"}, Destination: &g.SystemPrefixTokens, DefaultText: "0", Category: catShape, Usage: "tokens `DIST` of the prefix shared by all conversations (or by each --prefix-groups group)"},
		&cli.StringFlag{Name: "prefix-tokens", Destination: &g.PrefixTokens, DefaultText: "0", Category: catShape, Usage: "tokens `DIST` of each conversation's own prefix"},
		&cli.IntFlag{Name: "prefix-groups", Destination: &g.PrefixGroups, DefaultText: "0: the common prefix starts the first user message, as in vLLM", Category: catShape, Usage: "`G` groups of conversations, each sharing one system prompt of --system-prefix-tokens"},
		thinkTime,
		cliflag.Seed(&o.seed),
		&cli.IntFlag{Name: "workers", Destination: &o.workers, DefaultText: "all CPUs", Category: cliflag.CatRun, Usage: "`N` goroutines making text; the output does not depend on it"},

		cliflag.Output(&o.output, "-"),
		&cli.BoolFlag{Name: "stats", Destination: &g.Stats, DisableDefaultText: true, Category: cliflag.CatOutput, Usage: "print the statistics table (vLLM's print_stats: num_turns counts messages) to stderr"},

		cliflag.Alias("n", "num-conversations", "use --num-conversations (-n is --max-requests in mtrun)"),
	}
}

// catShape groups the flags that shape the conversations.
const catShape = "Conversations (DIST: see above):"

// run is mtgen with injected streams; it returns the exit code.
func run(s command.Streams, args []string) int {
	app := command.NewApp("mtgen", "generate synthetic multi-turn conversations (JSONL)", s)
	app.UsageText = usageText
	var o options
	app.Flags = flags(&o)
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return command.Usagef("unexpected argument %q (mtgen reads no files; see mtgen --help)", c.Args().First())
		}
		if cliflag.Given(c, app.Flags)(&o.seed) {
			o.gen.Seed = &o.seed
		}
		if o.gen.ThinkTime == "none" {
			o.gen.ThinkTime = ""
		}
		if o.textFiles != "" {
			o.gen.TextFiles = strings.Split(o.textFiles, ",")
		}
		return generate(c.Context, s, &o)
	}
	return command.Run(context.Background(), app, args)
}

// generate writes the conversations o asks for.
func generate(ctx context.Context, s command.Streams, o *options) error {
	if o.config != "" {
		if head, err := os.ReadFile(o.config); err == nil && inferenceperf.Detect(head) {
			return command.Usagef("--config %s is an inference-perf config: mtrun --config runs it (with --dry-run it shows the plan)", o.config)
		}
	}
	tok, err := tokenize.Load(o.tokenizer)
	if err != nil {
		return command.Exit(command.ExitUsage, err)
	}
	stop, _, release := command.Interrupts(ctx, s.Signals)
	defer release()
	out := &lazyOutput{path: o.output, stdout: s.Out}
	_, err = gen.Run(stop, gen.Options{
		ConfigPath: o.config, Overrides: o.gen, Tokenizer: tok,
		TokenizerName: o.tokenizer, Workers: o.workers,
	}, conv.NewWriter(out), s.Err)
	if cerr := out.close(err == nil); err == nil {
		err = cerr
	}
	switch {
	case errors.Is(err, gen.ErrFlag):
		return command.Exit(command.ExitUsage, err)
	case errors.Is(err, context.Canceled):
		return command.Exit(command.ExitInterrupted, nil)
	}
	return err
}

// lazyOutput creates -o at the first write, so that a flag value the
// generator rejects leaves an existing file as it was.
type lazyOutput struct {
	path   string
	stdout io.Writer
	out    *iox.Output
}

func (l *lazyOutput) Write(p []byte) (int, error) {
	if l.out == nil {
		out, err := iox.Create(l.path, l.stdout)
		if err != nil {
			return 0, err
		}
		l.out = out
	}
	return l.out.Write(p)
}

// Flush flushes the output once created.
func (l *lazyOutput) Flush() error {
	if l.out == nil {
		return nil
	}
	return l.out.Flush()
}

// close closes the output, creating it (empty) first if ok and nothing
// was written.
func (l *lazyOutput) close(ok bool) error {
	if l.out == nil && ok {
		if _, err := l.Write(nil); err != nil {
			return err
		}
	}
	if l.out == nil {
		return nil
	}
	return l.out.Close()
}
