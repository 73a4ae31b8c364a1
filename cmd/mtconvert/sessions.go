package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/source"
)

// converted reports whether internal/convert reads the input format
// named name itself (it has a Schema; conversation JSONL is OpenAI
// records with ids to it).
func converted(name string) bool {
	f, ok := source.Lookup(name)
	return ok && f.Schema != convert.SchemaAuto
}

// sessionFormat returns the format of the inputs when internal/source
// reads them rather than the converter: --input-format names such a format, or
// --input-format auto and the first input (a file) is detected as one. "" means
// the converter reads them.
func sessionFormat(from string, o convert.Options) string {
	if from != "auto" && from != "" {
		if converted(from) {
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
	if converted(in.Format.Name) {
		return ""
	}
	return in.Format.Name
}

// copySessions writes the sessions of the inputs, read in format by
// internal/source, as conversation JSONL (trace timestamps in
// timestamp_ms, the history policy in history).
func copySessions(ctx context.Context, s command.Streams, o convert.Options, v *flagValues, format string) error {
	out, err := iox.Create(v.output, s.Out)
	if err != nil {
		return err
	}
	stop, _, release := command.Interrupts(ctx, s.Signals)
	defer release()
	tok := v.tokenizer
	if tok == "none" {
		tok = ""
	}
	so := source.Options{Tokenizer: tok, Log: s.Err}
	st, err := source.Copy(stop, conv.NewWriter(out), o.Inputs, format, s.In, so, o.Dedupe)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, stop.Err()) && ctx.Err() == nil {
			return command.Exit(command.ExitInterrupted, errors.New("interrupted; output holds the conversations written so far"))
		}
		return err
	}
	if !v.quiet {
		fmt.Fprintf(s.Err, "inputs         %d (%s)\nconversations  %d written, %d dropped (duplicate_id)\n", st.Inputs, format, st.Written, st.Duplicates)
	}
	if st.Written == 0 {
		return nothingConverted(st.Written+st.Duplicates, 0, st.Written+st.Duplicates)
	}
	return nil
}
