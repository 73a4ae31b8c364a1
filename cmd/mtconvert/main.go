// Command mtconvert converts chat datasets (ShareGPT in every shape found
// in the wild, OpenAI "messages" JSONL, vLLM's JSON conversation list) into
// mtkit conversation JSONL for mtrun, with vLLM's convert_sharegpt_to_openai
// filters (without its defects), and prints a summary of what it dropped
// and why on stderr. See docs/mtconvert.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/tokenize"
)

func main() {
	os.Exit(run(context.Background(), os.Args, command.OSStreams()))
}

const usageText = `mtconvert [options] [FILE ...]   (no FILE or "-": stdin; options may follow the files)

Input formats: sharegpt, openai (a "messages" object per line), vllm (a
JSON list of conversations) and conversations are converted with the
options below; mtrun's other --input-format formats (generate, the traces)
are written as read; an unknown FORMAT lists them all. auto detects the
format of each input.

Examples:
   mtconvert sharegpt_90k.json.gz -o conversations.jsonl
   mtconvert --max-items 128 --min-turns 4 --ascii-only --tokenizer gpt-4o ShareGPT_V3.json > conv.jsonl
   zstdcat chats.jsonl.zst | mtconvert --input-format openai | mtrun --url http://localhost:8000`

// run is main with injected streams; it returns the exit code.
func run(ctx context.Context, args []string, s command.Streams) int {
	app := command.NewApp("mtconvert", "convert ShareGPT / OpenAI / vLLM chat datasets to conversation JSONL", s)
	app.UsageText = usageText
	var o convert.Options
	var v flagValues
	app.Flags = flags(&o, &v)
	app.Action = func(c *cli.Context) error {
		if err := options(c, s, &o, &v); err != nil {
			return err
		}
		if format := sessionFormat(v.from, o); format != "" {
			// The flags that apply to the converted formats only.
			if name := cliflag.FirstGiven(c, app.Flags, &v.parts, &v.alternation, &v.system, &o.KeepEmpty, &o.MinTurns, &o.MaxTurns,
				&o.MinContentLen, &o.MaxContentLen, &o.ASCIIOnly, &o.MaxItems, &o.Seed, &o.Strict); name != "" {
				return command.Usagef("--%s applies to the converted formats (sharegpt, openai, vllm), not to %s input", name, format)
			}
			return copySessions(c.Context, s, o, &v, format)
		}
		return convertAll(c.Context, s, &o, &v)
	}
	return command.Run(ctx, app, args)
}

// convertAll writes the conversations and the summary.
func convertAll(ctx context.Context, s command.Streams, opts *convert.Options, v *flagValues) error {
	out, err := iox.Create(v.output, s.Out)
	if err != nil {
		return err
	}
	stop, _, release := command.Interrupts(ctx, s.Signals)
	defer release()
	if limitMemory(opts, os.Getenv) > 0 {
		defer debug.SetMemoryLimit(math.MaxInt64)
	}
	sum, err := convert.Run(stop, *opts, convert.JSONL(out))
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	interrupted := errors.Is(err, context.Canceled) && ctx.Err() == nil
	if sum != nil && !v.quiet && (err == nil || interrupted) {
		if werr := sum.Write(s.Err); werr != nil && err == nil {
			err = werr
		}
	}
	if interrupted {
		return command.Exit(command.ExitInterrupted, errors.New("interrupted; output holds the conversations written so far"))
	}
	if err == nil && sum != nil && sum.Written == 0 {
		return nothingConverted(sum.Records, sum.Malformed, sum.Conversations)
	}
	return err
}

// nothingConverted is the error of a conversion that wrote nothing:
// mtconvert exits 1 rather than leave an empty output unnoticed.
func nothingConverted(records, malformed, conversations int) error {
	return fmt.Errorf("nothing converted: no conversation written (%d records read, %d malformed, %d conversations dropped; see the summary)", records, malformed, conversations)
}

// options completes o from the flags that need parsing.
func options(c *cli.Context, s command.Streams, o *convert.Options, v *flagValues) error {
	o.Inputs = c.Args().Slice()
	o.DropSystem = v.system == "drop"
	o.Log = s.Err
	o.Open = func(name string) (io.ReadCloser, string, error) {
		in, err := iox.Open(name, s.In)
		if err != nil {
			return nil, name, err
		}
		return in, in.Name, nil
	}
	if len(o.Inputs) == 0 {
		o.Inputs = []string{"-"}
	}
	var err error
	o.From = convert.SchemaAuto
	if v.from != "" && v.from != "auto" {
		f, ok := source.Lookup(v.from)
		if !ok {
			return command.Usagef("--input-format: format %q: want auto or one of %s", v.from, strings.Join(source.Names(), ", "))
		}
		o.From = f.Schema // SchemaAuto when internal/source reads it: see sessionFormat
	}
	if o.Parts, err = convert.ParsePartsMode(v.parts); err != nil {
		return command.Usagef("--parts: %v", err)
	}
	if o.Alternation, err = convert.ParseAlternation(v.alternation); err != nil {
		return command.Usagef("--alternation: %v", err)
	}
	if v.system != "keep" && v.system != "drop" {
		return command.Usagef("--system: %q: want keep or drop", v.system)
	}
	if spec := v.tokenizer; spec != "" && spec != "none" {
		tok, err := tokenize.Load(spec)
		if err != nil {
			return command.Usagef("--tokenizer: %v", err)
		}
		o.Tokenizer = tok
	}
	if err := o.Validate(); err != nil {
		return command.Usagef("%v", err)
	}
	return nil
}
