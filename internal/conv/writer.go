package conv

import (
	"encoding/json"
	"io"
)

// Writer writes conversations as JSONL.
type Writer struct {
	w   io.Writer
	enc *json.Encoder
}

// NewWriter returns a Writer to w. Writes are not flushed; call Flush (or
// close the iox.Output) on every exit path.
func NewWriter(w io.Writer) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Writer{w: w, enc: enc}
}

// Write writes one conversation as a line.
func (w *Writer) Write(c *Conversation) error {
	return w.enc.Encode(c)
}

// Flush flushes w's destination if it has a Flush() error method.
func (w *Writer) Flush() error {
	if f, ok := w.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
