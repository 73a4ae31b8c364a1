// Package jsonl reads JSON Lines with no limit on line length and turns
// encoding/json errors into "field: problem" messages, for the record and
// conversation formats.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Error is a problem with one line of an input.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Lines reads non-blank lines of any length.
type Lines struct {
	br   *bufio.Reader
	buf  []byte
	line int
}

// NewLines returns a line reader of r.
func NewLines(r io.Reader) *Lines {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	return &Lines{br: br}
}

// Next returns the next non-blank line, trimmed of surrounding space, and
// its 1-based line number. The slice is valid until the next call. It
// returns io.EOF at the end of input. A last line without "\n" is returned
// like any other.
func (l *Lines) Next() ([]byte, int, error) {
	for {
		l.buf = l.buf[:0]
		for {
			chunk, err := l.br.ReadSlice('\n')
			l.buf = append(l.buf, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) && len(l.buf) > 0 {
				break
			}
			if err != nil {
				return nil, l.line, err
			}
			break
		}
		l.line++
		if line := bytes.TrimSpace(l.buf); len(line) > 0 {
			return line, l.line, nil
		}
	}
}

// Reader exposes the underlying buffered reader (e.g. to sniff a JSON list).
func (l *Lines) Reader() *bufio.Reader { return l.br }

// FieldError rewrites an encoding/json error as "field: problem".
func FieldError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Errorf("%s: expected %s, got JSON %s", field, te.Type, te.Value)
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return err
}
