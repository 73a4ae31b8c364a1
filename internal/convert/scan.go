package convert

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner decodes the few JSON shapes the converters need straight from a
// record's bytes, validating everything it skips, so that a record is
// accepted exactly when encoding/json would accept it. Strings without
// escapes are converted with one allocation and no intermediate buffer.
type scanner struct {
	data []byte
	pos  int
	buf  []byte // scratch for unescaping
	// repaired counts the strings decoded since reset in which invalid
	// UTF-8 or an unpaired surrogate escape became U+FFFD.
	repaired int
}

// errSyntax is wrapped by every malformed-JSON error of the scanner.
var errSyntax = errors.New("invalid JSON")

func (s *scanner) reset(data []byte) {
	s.data, s.pos, s.repaired = data, 0, 0
}

func (s *scanner) syntaxf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", errSyntax, s.pos, fmt.Sprintf(format, args...))
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// end checks that only white space follows the value.
func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.data) {
		return s.syntaxf("unexpected %q after top-level value", s.data[s.pos])
	}
	return nil
}

// kind names the JSON type of the next value, for error messages.
func (s *scanner) kind() string {
	switch s.peek() {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case 0:
		return "nothing"
	}
	return "number"
}

// isNull consumes a null literal if one is next.
func (s *scanner) isNull() (bool, error) {
	if s.peek() != 'n' {
		return false, nil
	}
	return true, s.literal("null")
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.syntaxf("invalid literal")
	}
	s.pos += len(lit)
	return nil
}

// object calls fn for each key of the object that comes next; fn must
// consume the key's value. Keys are passed unescaped; the slice is only
// valid during the call.
func (s *scanner) object(fn func(key []byte) error) error {
	if s.peek() != '{' {
		return s.syntaxf("expected object")
	}
	s.pos++
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.syntaxf("expected object key")
		}
		key, err := s.rawString()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.syntaxf("expected ':' after object key")
		}
		s.pos++
		s.ws()
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.syntaxf("expected ',' or '}' in object")
		}
	}
}

// array calls fn for each element of the array that comes next; fn must
// consume the element.
func (s *scanner) array(fn func(i int) error) error {
	if s.peek() != '[' {
		return s.syntaxf("expected array")
	}
	s.pos++
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.ws()
		if err := fn(i); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.syntaxf("expected ',' or ']' in array")
		}
	}
}

// str decodes the string that comes next.
func (s *scanner) str() (string, error) {
	if s.peek() != '"' {
		return "", s.syntaxf("expected string")
	}
	b, err := s.rawString()
	return string(b), err
}

// rawString decodes the string at s.pos (which holds '"'); the returned
// slice aliases s.data or s.buf and is valid until the next call.
func (s *scanner) rawString() ([]byte, error) {
	start := s.pos + 1
	ascii := true
	i := start
	for ; i < len(s.data); i++ {
		c := s.data[i]
		if c == '"' {
			s.pos = i + 1
			b := s.data[start:i]
			if ascii || utf8.Valid(b) {
				return b, nil
			}
			return s.unquote(start, start)
		}
		if c == '\\' && ascii {
			return s.unquote(start, i)
		}
		if c == '\\' {
			return s.unquote(start, start)
		}
		if c < 0x20 {
			s.pos = i
			return nil, s.syntaxf("control character in string")
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	s.pos = i
	return nil, s.syntaxf("unterminated string")
}

// unquote decodes the string starting at data[start] (after the quote)
// slowly: escapes, and invalid UTF-8 replaced by U+FFFD as encoding/json
// does. data[start:plain] is known to be plain ASCII.
func (s *scanner) unquote(start, plain int) ([]byte, error) {
	b := append(s.buf[:0], s.data[start:plain]...)
	i := plain
	repaired := false
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			s.buf = b
			if repaired {
				s.repaired++
			}
			return b, nil
		case c == '\\':
			if i+1 >= len(s.data) {
				s.pos = i
				return nil, s.syntaxf("unterminated string")
			}
			switch e := s.data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i += 2
			case 'b':
				b, i = append(b, '\b'), i+2
			case 'f':
				b, i = append(b, '\f'), i+2
			case 'n':
				b, i = append(b, '\n'), i+2
			case 'r':
				b, i = append(b, '\r'), i+2
			case 't':
				b, i = append(b, '\t'), i+2
			case 'u':
				r, ok := hex4(s.data, i+2)
				if !ok {
					s.pos = i
					return nil, s.syntaxf("invalid \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(s.data) && s.data[i] == '\\' && s.data[i+1] == 'u' {
						if r2, ok := hex4(s.data, i+2); ok {
							if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
								b = utf8.AppendRune(b, d)
								i += 6
								continue
							}
						}
					}
					r, repaired = unicode.ReplacementChar, true
				}
				b = utf8.AppendRune(b, r)
			default:
				s.pos = i
				return nil, s.syntaxf("invalid escape \\%c", e)
			}
		case c < 0x20:
			s.pos = i
			return nil, s.syntaxf("control character in string")
		case c < utf8.RuneSelf:
			// Copy the run of plain ASCII at once.
			j := i + 1
			for j < len(s.data) && plainASCII[s.data[j]] {
				j++
			}
			b = append(b, s.data[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				b, repaired = utf8.AppendRune(b, unicode.ReplacementChar), true
			} else {
				b = append(b, s.data[i:i+size]...)
			}
			i += size
		}
	}
	s.pos = i
	s.buf = b
	return nil, s.syntaxf("unterminated string")
}

// plainASCII marks the ASCII bytes a string holds as they are: not a
// quote, a backslash or a control character.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// skip consumes and validates any value.
func (s *scanner) skip() error {
	return s.skipDepth(0)
}

// maxDepth bounds nesting like encoding/json does, so hostile input cannot
// exhaust the stack.
const maxDepth = 10000

func (s *scanner) skipDepth(depth int) error {
	if depth >= maxDepth {
		return s.syntaxf("exceeded max depth")
	}
	switch s.peek() {
	case '{':
		return s.object(func([]byte) error { return s.skipDepth(depth + 1) })
	case '[':
		return s.array(func(int) error { return s.skipDepth(depth + 1) })
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		return s.syntaxf("unexpected end of JSON input")
	}
	return s.number()
}

// skipString validates a string without decoding it.
func (s *scanner) skipString() error {
	i := s.pos + 1
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return nil
		case c == '\\':
			if i+1 >= len(s.data) {
				s.pos = i
				return s.syntaxf("unterminated string")
			}
			switch s.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(s.data, i+2); !ok {
					s.pos = i
					return s.syntaxf("invalid \\u escape")
				}
				i += 6
			default:
				s.pos = i
				return s.syntaxf("invalid escape")
			}
		case c < 0x20:
			s.pos = i
			return s.syntaxf("control character in string")
		default:
			i++
		}
	}
	s.pos = i
	return s.syntaxf("unterminated string")
}

// number validates a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	d, i := s.data, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		return s.syntaxf("invalid character %q looking for beginning of value", at(d, i))
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return s.syntaxf("invalid number")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return s.syntaxf("invalid number")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return nil
}

func at(d []byte, i int) byte {
	if i < len(d) {
		return d[i]
	}
	return 0
}

// rawNumber returns the text of the number that comes next.
func (s *scanner) rawNumber() (string, error) {
	s.ws()
	start := s.pos
	if err := s.number(); err != nil {
		return "", err
	}
	return string(s.data[start:s.pos]), nil
}

// raw consumes and validates the value that comes next and returns its
// bytes (valid until the next reset).
func (s *scanner) raw() ([]byte, error) {
	s.ws()
	start := s.pos
	if err := s.skip(); err != nil {
		return nil, err
	}
	return s.data[start:s.pos], nil
}

// kindOf names the JSON type of a raw value, for error messages.
func (s *scanner) kindOf(raw []byte) string {
	var t scanner
	t.reset(raw)
	return t.kind()
}
