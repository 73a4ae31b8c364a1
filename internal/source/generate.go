package source

import (
	"context"
	"fmt"
	"io"

	"github.com/mtkit/mtkit/internal/gen"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// vLLM's generate_conversations config (docs/mtgen.md): one JSON object
// with "prompt_input" or "filetype": "generate_conversations", and no
// "messages". The conversations are generated in-process by internal/gen
// as the replay asks (the config itself is read whole; it is small).
// Options.Tokenizer is the tokenizer the text is exact in, Options.Seed
// (when SeedSet) replaces the config's seed, and the config's statistics
// table, if asked for, goes to Options.Log.
func init() {
	Register(Format{
		Name: "generate",
		Doc:  `vLLM's generate_conversations config: conversations are generated from it in-process (as mtgen does)`,
		Detect: func(_ string, head []byte) bool {
			h := SniffJSON(head)
			if h.List || !h.Object || h.Has("messages") {
				return false
			}
			return h.Has("prompt_input") || h.Keys["filetype"] == gen.Filetype
		},
		Open: openGenerate,
	})
}

func openGenerate(r io.Reader, name string, o Options) (Source, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	spec := o.Tokenizer
	if spec == "" {
		spec = tokenize.Default
	}
	tok, err := tokenize.Load(spec)
	if err != nil {
		return nil, err
	}
	opts := gen.Options{ConfigPath: name, ConfigData: data, Tokenizer: tok, TokenizerName: spec}
	if o.SeedSet {
		seed := o.Seed
		opts.Overrides.Seed = &seed
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	return pull(func(w writerFunc) error {
		_, err := gen.Run(context.Background(), opts, w, log)
		return err
	}), nil
}
