package convert

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// source splits one decompressed input into raw records: the elements of
// a top-level JSON array, or the non-blank lines of JSONL. The container is
// detected from the first non-space byte: '[' is an array, anything else
// is read as JSONL. Memory is bounded by the largest record.
type source struct {
	name  string
	br    *bufio.Reader
	lines *jsonl.Lines // JSONL mode
	arr   *arraySplitter
	// isList is valid after the first next call.
	isList   bool
	detected bool
}

func newSource(r io.Reader, name string) *source {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 1<<16 {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	return &source{name: name, br: br}
}

// errTruncated marks input that ends inside a JSON array; what was read
// before it is still valid.
var errTruncated = errors.New("unexpected end of input inside the JSON array (truncated file?)")

// next returns the next record's bytes (valid until the next call) and its
// 1-based starting line. It returns io.EOF at a clean end. Errors other
// than io.EOF are *jsonl.Error values; after one, the input cannot be read
// further.
func (s *source) next() ([]byte, int, error) {
	if !s.detected {
		s.detected = true
		if err := s.detect(); err != nil {
			return nil, 1, err
		}
	}
	if s.arr != nil {
		return s.arr.next()
	}
	line, n, err := s.lines.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, n, fmt.Errorf("%s: %w", s.name, err)
	}
	return line, n, err
}

func (s *source) detect() error {
	for i := 1; ; i++ {
		head, err := s.br.Peek(i)
		if len(head) < i {
			if errors.Is(err, io.EOF) {
				s.lines = jsonl.NewLines(s.br)
				return nil
			}
			return fmt.Errorf("%s: %w", s.name, err)
		}
		switch head[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			s.isList = true
			s.arr = &arraySplitter{name: s.name, r: s.br, line: 1}
			return nil
		}
		s.lines = jsonl.NewLines(s.br)
		return nil
	}
}

// arraySplitter cuts a top-level JSON array into its elements without
// decoding them: it tracks strings, escapes and nesting depth only, and
// counts lines so that each element is located by the line it starts on.
type arraySplitter struct {
	name    string
	r       *bufio.Reader
	line    int
	elem    []byte
	started bool // '[' consumed
	done    bool
	count   int
}

// errf locates a problem with the data; read errors (other than the end
// of input, which means truncation here) are returned as they are.
func (a *arraySplitter) errf(line int, err error) error {
	a.done = true
	if errors.Is(err, io.EOF) {
		err = errTruncated
	}
	if err != errTruncated && !errors.Is(err, errSyntax) {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	return &jsonl.Error{File: a.name, Line: line, Err: err}
}

// skipSpace consumes white space and returns the next byte without
// consuming it.
func (a *arraySplitter) skipSpace() (byte, error) {
	for {
		c, err := a.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case '\n':
			a.line++
		case ' ', '\t', '\r':
		default:
			return c, a.r.UnreadByte()
		}
	}
}

func (a *arraySplitter) next() ([]byte, int, error) {
	if a.done {
		return nil, a.line, io.EOF
	}
	if !a.started {
		a.started = true
		if c, err := a.skipSpace(); err != nil || c != '[' {
			return nil, a.line, a.errf(a.line, fmt.Errorf("%w: expected '['", errSyntax))
		}
		a.r.ReadByte()
		c, err := a.skipSpace()
		if err != nil {
			return nil, a.line, a.errf(a.line, err)
		}
		if c == ']' {
			return nil, a.line, a.finish()
		}
	} else {
		c, err := a.skipSpace()
		switch {
		case err != nil:
			return nil, a.line, a.errf(a.line, err)
		case c == ']':
			return nil, a.line, a.finish()
		case c != ',':
			return nil, a.line, a.errf(a.line, fmt.Errorf("%w: expected ',' or ']' after array element %d, got %q", errSyntax, a.count, c))
		}
		a.r.ReadByte()
		if _, err := a.skipSpace(); err != nil {
			return nil, a.line, a.errf(a.line, err)
		}
	}
	start := a.line
	if err := a.scanElement(); err != nil {
		return nil, start, a.errf(start, err)
	}
	a.count++
	return a.elem, start, nil
}

// finish consumes ']' and checks that only white space follows.
func (a *arraySplitter) finish() error {
	a.r.ReadByte()
	a.done = true
	c, err := a.skipSpace()
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	if err != nil {
		return a.errf(a.line, err)
	}
	return a.errf(a.line, fmt.Errorf("%w: unexpected %q after the JSON array", errSyntax, c))
}

// stringPlain marks the bytes that scanElement passes over inside a
// string: all but '\\', '"' and '\n'.
var stringPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c != '\\' && c != '"' && c != '\n'
	}
	return t
}()

// scanElement reads one element into a.elem: a container up to its
// matching close, or a scalar up to the next ',' or ']' (not consumed).
func (a *arraySplitter) scanElement() error {
	a.elem = a.elem[:0]
	depth := 0
	inString := false
	for {
		buf, _ := a.r.Peek(a.r.Buffered())
		if len(buf) == 0 {
			if _, err := a.r.Peek(1); err != nil {
				if errors.Is(err, io.EOF) && depth == 0 && !inString && len(a.elem) > 0 {
					return nil // scalar at end; next() reports the missing ']'
				}
				return err
			}
			continue
		}
		i := 0
		for ; i < len(buf); i++ {
			if inString {
				for i < len(buf) && stringPlain[buf[i]] {
					i++
				}
				if i == len(buf) {
					break
				}
				switch buf[i] {
				case '\\':
					i++ // the escaped byte can never end the string
				case '"':
					inString = false
				case '\n':
					a.line++
				}
				continue
			}
			switch buf[i] {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					// End of a scalar element: ']' closes the array.
					goto scalarEnd
				}
				depth--
				if depth == 0 {
					i++
					a.elem = append(a.elem, buf[:i]...)
					a.r.Discard(i)
					return nil
				}
			case ',':
				if depth == 0 {
					goto scalarEnd
				}
			case '\n':
				a.line++
			}
		}
		if i > len(buf) {
			// A backslash was the last buffered byte: keep it and make the
			// escaped byte be skipped on the next round.
			i = len(buf)
			a.elem = append(a.elem, buf...)
			a.r.Discard(i)
			c, err := a.r.ReadByte()
			if err != nil {
				return err
			}
			a.elem = append(a.elem, c)
			if c == '\n' {
				a.line++
			}
			continue
		}
		a.elem = append(a.elem, buf[:i]...)
		a.r.Discard(i)
		continue
	scalarEnd:
		a.elem = append(a.elem, buf[:i]...)
		a.r.Discard(i)
		return nil
	}
}
