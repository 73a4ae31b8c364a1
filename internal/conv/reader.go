package conv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

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
	seen     map[string]int // conversation id -> line (list element) of its first use
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
	if err := r.decode(line, n); err != nil {
		return r.fail(&SyntaxError{File: r.name, Line: n, Err: err})
	}
	return true
}

// decode decodes and checks the conversation of data, found at line (or
// list element) n.
func (r *Reader) decode(data []byte, n int) error {
	if err := decodeConversation(data, &r.conv); err != nil {
		return err
	}
	if err := CheckUTF8(data); err != nil {
		return err
	}
	if err := checkRoles(r.conv.Messages); err != nil {
		return err
	}
	if first, dup := r.seen[r.conv.ID]; dup {
		where := "line"
		if r.list != nil {
			where = "list element"
		}
		return fmt.Errorf("id: %q already used by the conversation at %s %d", r.conv.ID, where, first)
	}
	if r.seen == nil {
		r.seen = make(map[string]int)
	}
	r.seen[r.conv.ID] = n
	return nil
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
	if err := r.decode(raw, r.elem); err != nil {
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

// roleTool is the role of a tool result message (written "tool" here so
// that the order check does not depend on the tool-call fields).
const roleTool = "tool"

// checkRoles enforces the order of roles a replay can follow: system
// messages only before every other message, at least one user message,
// and a tool message only right after an assistant message or another tool
// message. Assistant messages before the first user message, and two
// messages of one role in a row, are allowed (the replay sends them as
// context).
func checkRoles(msgs []Message) error {
	users := 0
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem:
			if i > 0 && msgs[i-1].Role != RoleSystem {
				return fmt.Errorf("messages[%d].role: system message after the conversation started (system messages must come first)", i)
			}
		case RoleUser:
			users++
		case roleTool:
			if i == 0 || (msgs[i-1].Role != RoleAssistant && msgs[i-1].Role != roleTool) {
				return fmt.Errorf("messages[%d].role: tool message not after an assistant message", i)
			}
		}
	}
	if users == 0 {
		return errors.New("messages: no user message (nothing to replay)")
	}
	return nil
}

// CheckUTF8 reports the field of the first string of data (one JSON value)
// that holds bytes that are not UTF-8, or a \u escape of an unpaired UTF-16
// surrogate: encoding/json would silently turn either into U+FFFD.
func CheckUTF8(data []byte) error {
	if utf8.Valid(data) && badEscape(data) < 0 {
		return nil
	}
	// Walk the tokens, keeping the path, to name the field.
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj      bool
		key      string
		idx      int
		expectKV bool // obj: the next string is a key
	}
	var stack []frame
	path := func() string {
		var sb strings.Builder
		for _, f := range stack {
			switch {
			case !f.obj:
				fmt.Fprintf(&sb, "[%d]", f.idx)
			case sb.Len() > 0:
				sb.WriteString("." + f.key)
			default:
				sb.WriteString(f.key)
			}
		}
		return sb.String()
	}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			// Unreachable for data json.Unmarshal accepted.
			return errors.New("invalid UTF-8")
		}
		raw := data[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		isKey := false
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].expectKV = true
			}
			if len(stack) == 0 {
				return errors.New("invalid UTF-8")
			}
			continue
		}
		key, isKey := tok.(string)
		isKey = isKey && top != nil && top.obj && top.expectKV
		if top != nil && !top.obj {
			top.idx++
		}
		if !utf8.Valid(raw) || badEscape(raw) >= 0 {
			what := "invalid UTF-8"
			if utf8.Valid(raw) {
				what = "unpaired UTF-16 surrogate " + string(raw[badEscape(raw):][:6])
			}
			if isKey {
				// The object's path, then the key quoted.
				top.key = ""
				if p := strings.TrimSuffix(path(), "."); p != "" {
					return fmt.Errorf("%s: key %+q: %s", p, key, what)
				}
				return fmt.Errorf("key %+q: %s", key, what)
			}
			return fmt.Errorf("%s: %s", path(), what)
		}
		if isKey {
			top.key, top.expectKV = key, false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, expectKV: true})
		case json.Delim('['):
			stack = append(stack, frame{idx: -1})
		default:
			if !isKey && top != nil && top.obj {
				top.expectKV = true
			}
		}
	}
}

// badEscape returns the offset in data (JSON text) of the first \u escape
// of a UTF-16 surrogate that is not part of a pair, or -1.
func badEscape(data []byte) int {
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		switch surrogate(data, i) {
		case 'l':
			return i
		case 'h':
			if surrogate(data, i+6) != 'l' {
				return i
			}
			i += 11
		default:
			i++ // skip the escaped byte
		}
	}
	return -1
}

// surrogate reports whether data[i:] starts with the \u escape of a high
// ('h', D800-DBFF) or low ('l', DC00-DFFF) UTF-16 surrogate, or neither (0).
func surrogate(data []byte, i int) byte {
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' || (data[i+2]|0x20) != 'd' {
		return 0
	}
	switch data[i+3] | 0x20 {
	case '8', '9', 'a', 'b':
		return 'h'
	case 'c', 'd', 'e', 'f':
		return 'l'
	}
	return 0
}

// ReadAll reads every conversation of r, named name in errors; it stops
// at the first bad record.
func ReadAll(r io.Reader, name string) ([]Conversation, error) {
	cr := NewReader(r, name)
	var out []Conversation
	for cr.Scan() {
		out = append(out, cr.Conversation())
	}
	return out, cr.Err()
}

// ReadFile reads every conversation of the file at path (ReadAll).
func ReadFile(path string) ([]Conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path)
}
