// Command mtconvert converts chat datasets (ShareGPT in every shape found
// in the wild, OpenAI "messages" JSONL, vLLM's JSON conversation list) into
// mtkit conversation JSONL for mtrun, with vLLM's convert_sharegpt_to_openai
// filters (without its defects), and prints a summary of what it dropped
// and why on stderr. See docs/mtconvert.md.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/tokenize"
)

func main() {
	os.Exit(run(context.Background(), os.Args, command.OSStreams()))
}

const usageText = `mtconvert [options] [FILE ...]   (no FILE or "-": stdin; options may follow the files)

Examples:
   mtconvert sharegpt_90k.json.gz -o conversations.jsonl
   mtconvert --max-items 128 --min-turns 4 --ascii-only --tokenizer gpt-4o ShareGPT_V3.json > conv.jsonl
   zstdcat chats.jsonl.zst | mtconvert --from openai | mtrun --url http://localhost:8000`

// run is main with injected streams; it returns the exit code.
func run(ctx context.Context, args []string, s command.Streams) int {
	app := command.NewApp("mtconvert", "convert ShareGPT / OpenAI / vLLM chat datasets to conversation JSONL", s)
	app.UsageText = usageText
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write conversations to `FILE` (.gz/.zst compress; - is stdout)"},
		&cli.StringFlag{Name: "from", Value: "auto", Usage: "input `FORMAT`: auto (detect per input); sharegpt, openai, vllm or conversations (converted with the options below); or another of mtrun's --input-format formats, e.g. generate or a trace (written as read; an unknown FORMAT lists them all)"},
		&cli.StringFlag{Name: "parts", Value: "adjacent", Usage: "merge ShareGPT id_N parts `MODE`: adjacent (streaming), all (holds the input in memory) or none"},
		&cli.StringFlag{Name: "alternation", Value: "repair", Usage: "`MODE` for roles that do not alternate user/assistant: repair (merge repeats, drop leading assistant) or drop"},
		&cli.StringFlag{Name: "system", Value: "keep", Usage: "system messages `MODE`: keep (leading ones) or drop"},
		&cli.BoolFlag{Name: "keep-empty", DisableDefaultText: true, Usage: "keep empty and white-space-only messages, which are removed by default"},
		&cli.BoolFlag{Name: "dedupe", Value: true, Usage: "drop a conversation whose id was already seen (--dedupe=false: off)"},
		&cli.IntFlag{Name: "min-turns", Usage: "drop conversations with fewer than `N` messages (user+assistant); 0: off"},
		&cli.IntFlag{Name: "max-turns", Usage: "keep only the first `N` messages (user+assistant) of a conversation; 0: off"},
		&cli.IntFlag{Name: "min-content-len", Usage: "drop conversations with a message shorter than `N` characters; 0: off"},
		&cli.IntFlag{Name: "max-content-len", Usage: "drop conversations with a message longer than `N` characters; 0: off"},
		&cli.BoolFlag{Name: "ascii-only", DisableDefaultText: true, Usage: "drop conversations with any non-ASCII character"},
		&cli.IntFlag{Name: "max-items", Usage: "write a random sample of at most `N` conversations (in input order); 0: all"},
		&cli.Uint64Flag{Name: "seed", Usage: "`SEED` of the --max-items sample"},
		&cli.StringFlag{Name: "tokenizer", Aliases: []string{"model"}, Usage: "count tokens with `SPEC` (o200k_base, cl100k_base, gpt-4o, tokenizer.json or model dir): sets tokens and assistant output_tokens, prints token statistics"},
		&cli.BoolFlag{Name: "strict", DisableDefaultText: true, Usage: "fail (exit 1) on the first malformed record instead of skipping it"},
		&cli.BoolFlag{Name: "quiet", DisableDefaultText: true, Aliases: []string{"q"}, Usage: "print no summary (warnings and errors still go to stderr)"},
	}
	app.Action = func(c *cli.Context) error { return action(c, s) }
	return command.Run(ctx, app, args)
}

func action(c *cli.Context, s command.Streams) error {
	opts, err := options(c, s)
	if err != nil {
		return err
	}
	if format := sessionFormat(c, opts); format != "" {
		return copySessions(c, s, opts, format)
	}
	out, err := iox.Create(c.String("output"), s.Out)
	if err != nil {
		return err
	}
	stop, _, release := command.Interrupts(c.Context, s.Signals)
	defer release()
	sum, err := convert.Run(stop, opts, conv.NewWriter(out))
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	interrupted := errors.Is(err, context.Canceled) && c.Context.Err() == nil
	if sum != nil && !c.Bool("quiet") && (err == nil || interrupted) {
		if werr := sum.Write(s.Err); werr != nil && err == nil {
			err = werr
		}
	}
	if interrupted {
		return command.Exit(command.ExitInterrupted, errors.New("interrupted; output holds the conversations written so far"))
	}
	return err
}

// options maps flags to convert.Options.
func options(c *cli.Context, s command.Streams) (convert.Options, error) {
	o := convert.Options{
		Inputs:        c.Args().Slice(),
		DropSystem:    c.String("system") == "drop",
		KeepEmpty:     c.Bool("keep-empty"),
		Dedupe:        c.Bool("dedupe"),
		ASCIIOnly:     c.Bool("ascii-only"),
		MinTurns:      c.Int("min-turns"),
		MaxTurns:      c.Int("max-turns"),
		MinContentLen: c.Int("min-content-len"),
		MaxContentLen: c.Int("max-content-len"),
		MaxItems:      c.Int("max-items"),
		Seed:          c.Uint64("seed"),
		Strict:        c.Bool("strict"),
		Log:           s.Err,
		Open: func(name string) (io.ReadCloser, string, error) {
			in, err := iox.Open(name, s.In)
			if err != nil {
				return nil, name, err
			}
			return in, in.Name, nil
		},
	}
	if len(o.Inputs) == 0 {
		o.Inputs = []string{"-"}
	}
	var err error
	if o.From, err = convert.ParseFormat(c.String("from")); err != nil {
		if _, ok := source.Lookup(c.String("from")); !ok {
			return o, command.Usagef("--from: format %q: want auto or one of %s", c.String("from"), strings.Join(source.Names(), ", "))
		}
		o.From = convert.FormatAuto // read by internal/source: see sessionFormat
	}
	if c.String("from") == "conversations" {
		o.From = convert.FormatOpenAI // OpenAI records with ids
	}
	if o.Parts, err = convert.ParsePartsMode(c.String("parts")); err != nil {
		return o, command.Usagef("--parts: %v", err)
	}
	if o.Alternation, err = convert.ParseAlternation(c.String("alternation")); err != nil {
		return o, command.Usagef("--alternation: %v", err)
	}
	if sys := c.String("system"); sys != "keep" && sys != "drop" {
		return o, command.Usagef("--system: %q: want keep or drop", sys)
	}
	if spec := c.String("tokenizer"); spec != "" {
		tok, err := tokenize.Load(spec)
		if err != nil {
			return o, command.Usagef("--tokenizer: %v", err)
		}
		o.Tokenizer = tok
	}
	if err := o.Validate(); err != nil {
		return o, command.Usagef("%v", err)
	}
	return o, nil
}
