package source

import (
	"context"
	"fmt"
	"io"

	"github.com/mtkit/mtkit/internal/conv"
)

// Writer receives sessions; *conv.Writer is one.
type Writer interface {
	Write(c *conv.Conversation) error
}

// CopyStats is what Copy read and wrote.
type CopyStats struct {
	Inputs, Written, Duplicates int
}

// Copy reads every session of paths ("-" is stdin), each in the format
// named format ("" detects each), and writes them to w in order; with
// dedupe, a session whose id was already written is dropped and counted.
// mtconvert uses it for the formats it does not convert itself (traces,
// generate_conversations configs, conversation JSONL).
func Copy(ctx context.Context, w Writer, paths []string, format string, stdin io.Reader, o Options, dedupe bool) (CopyStats, error) {
	var st CopyStats
	seen := map[string]bool{}
	for _, path := range paths {
		in, err := Open(path, format, stdin, o)
		if err != nil {
			return st, err
		}
		st.Inputs++
		err = copyInput(ctx, w, in, &st, seen, dedupe)
		if cerr := in.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

func copyInput(ctx context.Context, w Writer, in *Input, st *CopyStats, seen map[string]bool, dedupe bool) error {
	for c, ok := in.Next(); ok; c, ok = in.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if dedupe {
			if seen[c.ID] {
				st.Duplicates++
				continue
			}
			seen[c.ID] = true
		}
		if err := w.Write(&c); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		st.Written++
	}
	return in.Err()
}
