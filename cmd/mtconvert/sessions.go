package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/source"
)

// convertedFormats are the input formats internal/convert reads itself
// (conversation JSONL is OpenAI records with ids to it).
var convertedFormats = map[string]bool{"sharegpt": true, "openai": true, "vllm": true, "conversations": true}

// sessionFormat returns the format of the inputs when internal/source
// reads them rather than the converter: --input-format names such a format, or
// --input-format auto and the first input (a file) is detected as one. "" means
// the converter reads them.
func sessionFormat(c *cli.Context, o convert.Options) string {
	from := c.String("input-format")
	if from != "auto" && from != "" {
		if convertedFormats[from] {
			return ""
		}
		return from
	}
	if o.Inputs[0] == "-" {
		return ""
	}
	in, err := source.Open(o.Inputs[0], "", nil, source.Options{})
	if err != nil {
		return "" // the converter reports it
	}
	in.Close()
	if convertedFormats[in.Format.Name] {
		return ""
	}
	return in.Format.Name
}

// datasetFlags apply to the converted formats only.
var datasetFlags = []string{"parts", "alternation", "system", "keep-empty", "min-turns", "max-turns",
	"min-content-len", "max-content-len", "ascii-only", "max-items", "seed", "strict"}

// copySessions writes the sessions of the inputs, read in format by
// internal/source, as conversation JSONL (trace timestamps in
// timestamp_ms, the history policy in history).
func copySessions(c *cli.Context, s command.Streams, o convert.Options, format string) error {
	for _, name := range datasetFlags {
		if c.IsSet(name) {
			return command.Usagef("--%s applies to the converted formats (sharegpt, openai, vllm), not to %s input", name, format)
		}
	}
	out, err := iox.Create(c.String("output"), s.Out)
	if err != nil {
		return err
	}
	stop, _, release := command.Interrupts(c.Context, s.Signals)
	defer release()
	tok := c.String("tokenizer")
	if tok == "none" {
		tok = ""
	}
	so := source.Options{Tokenizer: tok, Log: s.Err}
	st, err := source.Copy(stop, conv.NewWriter(out), o.Inputs, format, s.In, so, o.Dedupe)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, stop.Err()) && c.Context.Err() == nil {
			return command.Exit(command.ExitInterrupted, errors.New("interrupted; output holds the conversations written so far"))
		}
		return err
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(s.Err, "inputs         %d (%s)\nconversations  %d written, %d dropped (duplicate_id)\n", st.Inputs, format, st.Written, st.Duplicates)
	}
	if st.Written == 0 {
		return nothingConverted(st.Written+st.Duplicates, 0, st.Written+st.Duplicates)
	}
	return nil
}
