package source

import (
	"fmt"
	"io"

	"github.com/mtkit/mtkit/internal/inferenceperf"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// An inference-perf config (docs/inference-perf.md): its shared-prefix
// user sessions, planned from the file with Options.Tokenizer (the text
// is token-exact in it) and Options.Seed where the file gives no seed.
// The Source is a *Planned, whose Plan also holds the load stages and
// the server settings. mtrun reads these files through --config, which
// names this format: it is not detected from an input's content.
func init() {
	Register(Format{
		Name: "inference-perf",
		Doc:  "inference-perf's YAML config (mtrun --config): its shared-prefix user sessions and load stages",
		Open: openInferencePerf,
	})
}

// Planned is the Source of an inference-perf config: its sessions in the
// plan's order, and the plan.
type Planned struct {
	Source
	Plan *inferenceperf.Plan
}

func openInferencePerf(r io.Reader, name string, o Options) (Source, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c, err := inferenceperf.Parse(name, data)
	if err != nil {
		return nil, err
	}
	spec := o.Tokenizer
	if spec == "" {
		spec = tokenize.Default
	}
	tok, err := tokenize.Load(spec)
	if err != nil {
		return nil, err
	}
	p, err := c.Plan(tok, spec, o.Seed)
	if err != nil {
		return nil, err
	}
	return &Planned{Source: Slice(p.Sessions), Plan: p}, nil
}
