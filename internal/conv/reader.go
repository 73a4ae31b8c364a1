package conv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// SyntaxError is a problem with one conversation of an input, located by
// file and line (for JSON lists, the element index).
type SyntaxError = jsonl.Error

// Reader reads conversations from JSONL or from vLLM's JSON list, one at a
// time, with no limit on line length. Its API is modeled on bufio.Scanner.
// Input must already be decompressed (see iox.Open).
type Reader struct {
	name     string
	lines    *jsonl.Lines
	detected bool
	elem     int
	list     *json.Decoder // non-nil when reading a JSON list
	conv     Conversation
	err      error
	done     bool
}

// NewReader returns a Reader of r; name is used in error messages.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, lines: jsonl.NewLines(r)}
}

// Scan advances to the next conversation. It returns false at the end of
// the input or at the first error, which Err reports.
func (r *Reader) Scan() bool {
	if r.done {
		return false
	}
	if !r.detected {
		r.detected = true
		if err := r.detect(); err != nil {
			return r.fail(err)
		}
	}
	if r.list != nil {
		return r.scanList()
	}
	line, n, err := r.lines.Next()
	if err == io.EOF {
		r.done = true
		return false
	}
	if err != nil {
		return r.fail(fmt.Errorf("%s: %w", r.name, err))
	}
	if err := decodeConversation(line, &r.conv); err != nil {
		return r.fail(&SyntaxError{File: r.name, Line: n, Err: err})
	}
	return true
}

// detect peeks past leading white space: '[' starts a JSON list.
func (r *Reader) detect() error {
	br := r.lines.Reader()
	for i := 1; ; i++ {
		head, err := br.Peek(i)
		if len(head) < i {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("%s: %w", r.name, err)
		}
		switch head[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			r.list = json.NewDecoder(br)
			if _, err := r.list.Token(); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
		return nil
	}
}

func (r *Reader) scanList() bool {
	if !r.list.More() {
		tok, err := r.list.Token()
		if err != nil || tok != json.Delim(']') {
			return r.fail(&SyntaxError{File: r.name, Line: r.elem + 1, Err: errors.New("JSON list not closed with ']'")})
		}
		r.done = true
		return false
	}
	r.elem++
	var raw json.RawMessage
	if err := r.list.Decode(&raw); err != nil {
		return r.fail(&SyntaxError{File: r.name, Line: r.elem, Err: fmt.Errorf("list element %d: %w", r.elem, jsonl.FieldError(err))})
	}
	if err := decodeConversation(raw, &r.conv); err != nil {
		return r.fail(&SyntaxError{File: r.name, Line: r.elem, Err: fmt.Errorf("list element %d: %w", r.elem, err)})
	}
	return true
}

func (r *Reader) fail(err error) bool {
	if r.err == nil {
		r.err = err
	}
	r.done = true
	return false
}

// Conversation returns the conversation read by the last Scan. The value
// is owned by the caller and stays valid after the next Scan.
func (r *Reader) Conversation() Conversation { return r.conv }

// Err returns the first error met, or nil at a clean end of input.
func (r *Reader) Err() error { return r.err }
