package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/goccy/go-json"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// Encoder writes records.
type Encoder interface {
	// Encode writes one record. JSONEncoder on an unbuffered writer makes
	// it readable at once; the encoders of Create buffer it until Flush.
	Encode(r *Record) error
	// Flush makes the records encoded so far readable by other processes,
	// as far as the encoder's format allows: the encoders of Create end a
	// compressed frame or close a Parquet part at most once a second, so
	// call it periodically (the replay does, every 500 ms).
	Flush() error
	// Close flushes and finalizes the output (Parquet writes its footer).
	Close() error
}

// JSONEncoder writes records as JSON lines and flushes after each, so a
// killed process leaves only complete lines. The codec is goccy/go-json
// on the Record's json tags, with HTML escaping off: BenchmarkRecordJSON
// (bench_lib_test.go) measured it against the hand-written codec it
// replaced and other libraries.
type JSONEncoder struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder // writes to buf
	err error         // first write error; like json.Encoder, later Encodes return it
}

var _ Encoder = (*JSONEncoder)(nil)

// maxKeptBuffer bounds the line buffer kept between records, so one huge
// record does not pin its memory for the rest of the run.
const maxKeptBuffer = 1 << 20

// NewJSONEncoder returns an encoder to w. If w has Flush() error, it is
// called after each record.
func NewJSONEncoder(w io.Writer) *JSONEncoder {
	e := &JSONEncoder{w: w}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// Encode writes r as one line, in a single Write. A record that cannot be
// encoded (a time outside RFC 3339's years 0–9999, a NaN or infinite
// float) writes nothing and returns the error.
func (e *JSONEncoder) Encode(r *Record) error {
	if e.err != nil {
		return e.err
	}
	e.buf.Reset()
	if err := e.enc.Encode(r); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if _, err := e.w.Write(e.buf.Bytes()); err != nil {
		e.err = err
		return err
	}
	if e.buf.Cap() > maxKeptBuffer {
		e.buf = bytes.Buffer{}
	}
	return e.Flush()
}

// Flush flushes the destination if it buffers.
func (e *JSONEncoder) Flush() error {
	if f, ok := e.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// Close flushes; it does not close the destination.
func (e *JSONEncoder) Close() error { return e.Flush() }

// SyntaxError is a malformed record line, located by file and line.
type SyntaxError = jsonl.Error

// JSONDecoder reads JSONL records with no line-length limit. Its API is
// modeled on bufio.Scanner; per-line problems are returned by Scan's
// caller through Err as *SyntaxError and do not stop the scan.
type JSONDecoder struct {
	name  string
	lines *jsonl.Lines
	cols  *Columns // nil: every field
	rec   Record
	err   error
	fatal bool
}

// NewJSONDecoder returns a decoder of r (already decompressed); name is
// used in errors.
func NewJSONDecoder(r io.Reader, name string) *JSONDecoder {
	return &JSONDecoder{name: name, lines: jsonl.NewLines(r)}
}

// Scan reads the next line. It returns true when a line was consumed:
// then either Err is nil and Record holds it, or Err is a *SyntaxError for
// that line. It returns false at the end of input or on a read error.
func (d *JSONDecoder) Scan() bool {
	if d.fatal {
		return false
	}
	d.err = nil
	line, n, err := d.lines.Next()
	if err == io.EOF {
		return false
	}
	if err != nil {
		d.err, d.fatal = fmt.Errorf("%s: %w", d.name, err), true
		return false
	}
	d.rec = Record{}
	if err := unmarshalRecord(line, &d.rec, d.cols); err != nil {
		d.err = &SyntaxError{File: d.name, Line: n, Err: lineProblem(err, d.atEOF())}
	} else if err := d.rec.validate(); err != nil {
		d.err = &SyntaxError{File: d.name, Line: n, Err: err}
	}
	return true
}

// ErrTruncated is the problem of a last line cut short, as a killed writer
// leaves it.
var ErrTruncated = errors.New("truncated last line (was the writer killed?)")

// atEOF reports whether the input has no more data: only then can a line
// lack its newline.
func (d *JSONDecoder) atEOF() bool {
	_, err := d.lines.Reader().Peek(1)
	return errors.Is(err, io.EOF)
}

// lineProblem is the problem of a line that did not decode: ErrTruncated
// for a line cut short at the end of the input (atEOF), else err (see
// unmarshalRecord).
func lineProblem(err error, atEOF bool) error {
	if atEOF && errors.Is(err, errEndOfInput) {
		return ErrTruncated
	}
	return err
}

// Record returns the record of the last successful Scan.
func (d *JSONDecoder) Record() *Record { return &d.rec }

// Err returns the problem with the last line, or a read error.
func (d *JSONDecoder) Err() error { return d.err }

func (r *Record) validate() error {
	switch {
	case r.RunID == "":
		return fmt.Errorf("run_id: missing")
	case r.Start.IsZero():
		return fmt.Errorf("start: missing")
	case r.End.Before(r.Start):
		return fmt.Errorf("end: %s is before start %s", r.End, r.Start)
	}
	return nil
}
