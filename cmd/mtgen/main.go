// Command mtgen writes synthetic multi-turn conversations as JSONL for
// mtrun: turn counts, prompt and answer lengths and think times from
// seeded distributions, prompts cut from a corpus to exactly the requested
// number of tokens. It reads vLLM's generate_conversations JSON config.
// See docs/mtgen.md.
package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/dist"
	"github.com/mtkit/mtkit/internal/gen"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/tokenize"
)

const usageText = `mtgen [options]

   Writes one conversation per line (JSONL) to stdout or -o FILE. Turns
   count messages (a user message and its answer are two), as in vLLM.
   Flags override the --config file's settings.

` + dist.Syntax + `

Examples:
   mtgen -n 100 --turns uniform:4:10 --input-tokens lognormal:avg=500,median_ratio=0.8,max=2000 \
         --output-tokens constant:100 --system-prefix-tokens 1000 --prefix-tokens 500 \
         --think-time exponential:mean=2s > convs.jsonl
   mtgen --config generate_multi_turn.json --tokenizer ./Llama-3.1-8B/ -o convs.jsonl.zst
   mtgen -n 1000 --prefix-groups 8 --system-prefix-tokens 2000 --stats | mtrun ...`

func main() {
	os.Exit(run(command.OSStreams(), os.Args))
}

// run is mtgen with injected streams; it returns the exit code.
func run(s command.Streams, args []string) int {
	app := command.NewApp("mtgen", "generate synthetic multi-turn conversations (JSONL)", s)
	app.UsageText = usageText
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "vLLM generate_conversations JSON config `FILE`"},
		&cli.IntFlag{Name: "num-conversations", Aliases: []string{"n"}, DefaultText: "100", Usage: "number of conversations `N`"},
		&cli.StringFlag{Name: "turns", Usage: "messages per conversation `DIST`, rounded up to even, at least 2 (default uniform:12:18)"},
		&cli.StringFlag{Name: "input-tokens", Usage: "tokens per user message `DIST`; the first includes the prefixes (default uniform:120:160)"},
		&cli.StringFlag{Name: "output-tokens", Usage: "target tokens per answer `DIST` (default uniform:80:120)"},
		&cli.StringFlag{Name: "system-prefix-tokens", Aliases: []string{"common-prefix-tokens"}, Usage: "tokens of the prefix shared by all conversations (or by each --prefix-groups group) `DIST` (default 0)"},
		&cli.StringFlag{Name: "prefix-tokens", Usage: "tokens of each conversation's own prefix `DIST` (default 0)"},
		&cli.StringFlag{Name: "think-time", Usage: "pause before each user message but the first `DIST`, e.g. exponential:mean=2s (default none)"},
		&cli.IntFlag{Name: "prefix-groups", DefaultText: "0: the common prefix starts the first user message, as in vLLM", Usage: "`G` groups of conversations, each sharing one system prompt of --system-prefix-tokens"},
		&cli.StringFlag{Name: "tokenizer", Aliases: []string{"t"}, Value: tokenize.Default, Usage: "`SPEC`: a built-in encoding (o200k_base, cl100k_base), a tokenizer.json file or a model directory"},
		&cli.Uint64Flag{Name: "seed", Usage: "random `SEED`; the same seed, config, corpus and tokenizer give the same bytes"},
		&cli.StringFlag{Name: "text-files", Usage: "comma-separated corpus `FILES` (default: the embedded public-domain corpus)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output `FILE`, - for stdout; .gz and .zst compress"},
		&cli.BoolFlag{Name: "stats", DefaultText: "off", Usage: "print the statistics table (vLLM's print_stats) to stderr"},
		&cli.IntFlag{Name: "workers", DefaultText: "all CPUs", Usage: "`N` goroutines making text; the output does not depend on it"},
	}
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return command.Usagef("unexpected argument %q (mtgen reads no files; see mtgen --help)", c.Args().First())
		}
		o := gen.Overrides{
			NumConversations: c.Int("num-conversations"), Turns: c.String("turns"),
			InputTokens: c.String("input-tokens"), OutputTokens: c.String("output-tokens"),
			SystemPrefixTokens: c.String("system-prefix-tokens"), PrefixTokens: c.String("prefix-tokens"),
			ThinkTime: c.String("think-time"), PrefixGroups: c.Int("prefix-groups"), Stats: c.Bool("stats"),
		}
		if c.IsSet("seed") {
			seed := c.Uint64("seed")
			o.Seed = &seed
		}
		if f := c.String("text-files"); f != "" {
			o.TextFiles = strings.Split(f, ",")
		}
		tok, err := tokenize.Load(c.String("tokenizer"))
		if err != nil {
			return command.Exit(command.ExitUsage, err)
		}
		stop, _, release := command.Interrupts(c.Context, s.Signals)
		defer release()
		out, err := iox.Create(c.String("output"), s.Out)
		if err != nil {
			return err
		}
		_, err = gen.Run(stop, gen.Options{
			ConfigPath: c.String("config"), Overrides: o, Tokenizer: tok,
			TokenizerName: c.String("tokenizer"), Workers: c.Int("workers"),
		}, conv.NewWriter(out), s.Err)
		if cerr := out.Close(); err == nil {
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
	return command.Run(context.Background(), app, args)
}
