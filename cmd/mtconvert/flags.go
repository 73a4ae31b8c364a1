package main

import (
	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/convert"
)

// flagValues are the flags that are not convert.Options fields as they are.
type flagValues struct {
	output, from, parts, alternation, system, tokenizer string
	quiet                                               bool
}

// flags binds mtconvert's flags to o and v.
func flags(o *convert.Options, v *flagValues) []cli.Flag {
	const catFilter = "Filters (drop conversations or cut them):"
	maxTurns := cliflag.MaxTurns(&o.MaxTurns)
	maxTurns.Category = catFilter
	seed := cliflag.Seed(&o.Seed)
	seed.Category = catFilter
	return []cli.Flag{
		cliflag.InputFormat(&v.from),
		&cli.StringFlag{Name: "parts", Value: "adjacent", Destination: &v.parts, Category: cliflag.CatInput, Usage: "merge ShareGPT id_N parts `MODE`: adjacent (streaming), all (holds the input in memory) or none"},
		&cli.StringFlag{Name: "alternation", Value: "repair", Destination: &v.alternation, Category: cliflag.CatInput, Usage: "`MODE` for roles that do not alternate user/assistant: repair (merge repeats, drop leading assistant) or drop"},
		&cli.StringFlag{Name: "system", Value: "keep", Destination: &v.system, Category: cliflag.CatInput, Usage: "system messages `MODE`: keep (leading ones) or drop"},
		&cli.BoolFlag{Name: "keep-empty", Destination: &o.KeepEmpty, DisableDefaultText: true, Category: cliflag.CatInput, Usage: "keep empty and white-space-only messages, which are removed by default"},
		&cli.BoolFlag{Name: "dedupe", Value: true, Destination: &o.Dedupe, Category: cliflag.CatInput, Usage: "drop a conversation whose id was already seen (--dedupe=false: off)"},
		cliflag.Strict(&o.Strict),
		cliflag.Tokenizer(&v.tokenizer, "none"),

		&cli.IntFlag{Name: "min-turns", Destination: &o.MinTurns, Category: catFilter, Usage: "drop conversations with fewer than `N` messages (user and assistant: vLLM's turns); 0: off"},
		maxTurns,
		&cli.IntFlag{Name: "min-content-len", Destination: &o.MinContentLen, Category: catFilter, Usage: "drop conversations with a message shorter than `N` characters; 0: off"},
		&cli.IntFlag{Name: "max-content-len", Destination: &o.MaxContentLen, Category: catFilter, Usage: "drop conversations with a message longer than `N` characters; 0: off"},
		&cli.BoolFlag{Name: "ascii-only", Destination: &o.ASCIIOnly, DisableDefaultText: true, Category: catFilter, Usage: "drop conversations with any non-ASCII character"},
		&cli.IntFlag{Name: "max-items", Destination: &o.MaxItems, Category: catFilter, Usage: "write a random sample of at most `N` conversations (in input order); 0: all"},
		seed,

		cliflag.Output(&v.output, "-"),
		cliflag.Quiet(&v.quiet),

		cliflag.Alias("from", "input-format", "use --input-format"),
		cliflag.Alias("model", "tokenizer", ""), // vLLM's convert_sharegpt_to_openai.py spelling
	}
}
