package source

import (
	"io"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
)

// The conversation JSONL format: mtkit's own (docs/conversations.md), one
// conversation with an "id" and "messages" per line. Read as the replay
// asks, one line at a time.
func init() {
	Register(Format{
		Name:   "conversations",
		Doc:    `mtkit conversation JSONL: one {"id", "messages"} per line (mtgen, mtconvert)`,
		Schema: convert.SchemaOpenAI,
		Detect: func(_ string, head []byte) bool {
			h := SniffJSON(head)
			return !h.List && h.Has("id", "messages") && !isShareGPT(h)
		},
		Open: openConvReader,
	})
}

// openConvReader reads conversation JSONL or vLLM's JSON list with
// conv.Reader, which checks each conversation and locates errors by line
// (list element).
func openConvReader(r io.Reader, name string, _ Options) (Source, error) {
	return &convReader{r: conv.NewReader(r, name)}, nil
}

type convReader struct{ r *conv.Reader }

func (c *convReader) Next() (conv.Conversation, bool) {
	if !c.r.Scan() {
		return conv.Conversation{}, false
	}
	return c.r.Conversation(), true
}

func (c *convReader) Err() error   { return c.r.Err() }
func (c *convReader) Close() error { return nil }
