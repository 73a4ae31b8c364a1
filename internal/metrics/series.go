package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// Writer writes samples as JSON lines. It is safe for concurrent use; each
// scrape is written in one call and flushed, so a run that is killed
// leaves whole scrapes behind.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	err error
	n   int
}

// NewWriter returns a Writer on w; when w has a Flush() error method it
// is called after each scrape.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes the samples of one scrape.
func (w *Writer) Write(samples []Sample) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	for i := range samples {
		if err := enc.Encode(&samples[i]); err != nil {
			return err // cannot happen: values are finite, times in range
		}
	}
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		w.err = err
		return err
	}
	if f, ok := w.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			w.err = err
			return err
		}
	}
	w.n += len(samples)
	return nil
}

// Samples returns the number of samples written.
func (w *Writer) Samples() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// SyntaxError is a line of a series file that is not a valid sample.
type SyntaxError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *SyntaxError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Reader reads a series file line by line, in the manner of bufio.Scanner.
// The first invalid line stops it with a *SyntaxError.
type Reader struct {
	r    *jsonl.Lines
	name string
	line int
	cur  Sample
	err  error
}

// NewReader returns a Reader of r; name is used in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{r: jsonl.NewLines(r), name: name}
}

// Scan reads the next sample; false at the end or on an error.
func (r *Reader) Scan() bool {
	if r.err != nil {
		return false
	}
	b, line, err := r.r.Next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("%s: %w", r.name, err)
		}
		return false
	}
	r.line = line
	r.cur = Sample{}
	r.err = r.decode(b)
	return r.err == nil
}

func (r *Reader) decode(b []byte) error {
	bad := func(field, msg string) error {
		return &SyntaxError{File: r.name, Line: r.line, Field: field, Msg: msg}
	}
	if err := json.Unmarshal(b, &r.cur); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return bad(te.Field, fmt.Sprintf("want %s, got %s", te.Type, te.Value))
		}
		return bad("", jsonl.FieldError(err).Error())
	}
	s := &r.cur
	switch {
	case s.Time.IsZero():
		return bad("time", "missing")
	case s.Name == "":
		return bad("name", "missing")
	case s.Replica < 0:
		return bad("replica", fmt.Sprintf("negative (%d)", s.Replica))
	case s.Value == nil && s.NonFinite == "" && s.Error == "":
		return bad("value", "missing (null without nonfinite or error)")
	case s.Value != nil && s.NonFinite != "":
		return bad("nonfinite", "set together with a value")
	}
	switch s.NonFinite {
	case "", "NaN", "+Inf", "-Inf":
	default:
		return bad("nonfinite", fmt.Sprintf("%q: want NaN, +Inf or -Inf", s.NonFinite))
	}
	switch s.Type {
	case "counter", "gauge", "histogram", "gaugehistogram", "summary", "untyped":
	default:
		return bad("type", fmt.Sprintf("%q: want counter, gauge, histogram, gaugehistogram, summary or untyped", s.Type))
	}
	if strings.ContainsAny(s.Name, "\n\r") {
		return bad("name", "contains a line break")
	}
	return nil
}

// Sample returns the sample read by the last Scan.
func (r *Reader) Sample() Sample { return r.cur }

// Err returns the error that stopped Scan, or nil at the end of input.
func (r *Reader) Err() error { return r.err }
