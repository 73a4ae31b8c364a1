package tokenize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// hfFile is the subset of a Hugging Face tokenizer.json that a byte-level
// BPE tokenizer needs. Everything but the model's vocab and merges is
// small and decoded with encoding/json; those two are streamed straight
// into compact tables (hfVocab, hfMerges).
type hfFile struct {
	AddedTokens  []hfAddedToken  `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Decoder      json.RawMessage `json:"decoder"`
	Model        *hfModel        `json:"-"`
}

// hfAddedToken is one entry of added_tokens.
type hfAddedToken struct {
	ID         *int   `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfModel is the "model" object.
type hfModel struct {
	Type                    string   `json:"type"`
	IgnoreMerges            bool     `json:"ignore_merges"`
	Dropout                 *float64 `json:"dropout"`
	UnkToken                *string  `json:"unk_token"`
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	ByteFallback            bool     `json:"byte_fallback"`

	vocab  *hfVocab // nil if absent or null
	merges hfMerges
}

// hfVocab is model.vocab as read: each token's text and, for byte-level
// tokens, its raw bytes as a key.
type hfVocab struct {
	b     tableBuilder
	maxID int32
	// odd maps the tokens that are not byte-level text (none in real
	// byte-level models) to their ids: merges may still name them.
	odd map[string]int32
}

// hfMerges is model.merges as read: merge i joins the tokens
// data[off[2i]:off[2i+1]] and data[off[2i+1]:off[2i+2]], as written in
// the file (byte-level text).
type hfMerges struct {
	data []byte
	off  []uint32
}

// len returns the number of merges.
func (m *hfMerges) len() int { return max(0, len(m.off)-1) / 2 }

// pair returns the two tokens of merge i.
func (m *hfMerges) pair(i int) (a, b []byte) {
	return m.data[m.off[2*i]:m.off[2*i+1]], m.data[m.off[2*i+1]:m.off[2*i+2]]
}

// hfComponent is the common shape of normalizers, pre-tokenizers and
// decoders: a type tag plus type-specific fields.
type hfComponent struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Decoders      []json.RawMessage `json:"decoders"`
	// Split
	Pattern  *hfPattern `json:"pattern"`
	Behavior string     `json:"behavior"`
	Invert   bool       `json:"invert"`
	// ByteLevel
	AddPrefixSpace *bool `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
}

// hfPattern is a Split pattern: a regular expression or a literal string.
type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// ParseJSON parses a Hugging Face tokenizer.json document holding a
// byte-level BPE model (GPT-2, GPT-4o, Llama-3, Qwen2/Qwen3 style); name is
// used in errors and returned by Name. It never panics on malformed input.
func ParseJSON(data []byte, name string) (Tokenizer, error) {
	return parseHF(bytes.NewReader(data), name, func(off int64) string {
		return lineCol(name, bytes.NewReader(data), off)
	})
}

// parseHF reads a tokenizer.json from r and builds its tokenizer. Errors
// start with name, and with name:line:col where pos can place them.
func parseHF(r io.Reader, name string, pos func(off int64) string) (Tokenizer, error) {
	f, err := readHF(r)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", pos(pe.off), pe.err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b, err := newBPE(f, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// posError is an error at a byte offset of the input.
type posError struct {
	off int64
	err error
}

func (e *posError) Error() string { return fmt.Sprintf("offset %d: %v", e.off, e.err) }
func (e *posError) Unwrap() error { return e.err }

// lineCol returns name:line:col of byte offset off of r's content, or
// name when r is shorter.
func lineCol(name string, r io.Reader, off int64) string {
	br := bufio.NewReader(r)
	line, col := 1, 1
	for i := int64(0); i < off; i++ {
		c, err := br.ReadByte()
		if err != nil {
			break
		}
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// hfReader streams a tokenizer.json.
type hfReader struct {
	dec  *jsontext.Decoder
	name []byte // scratch: the last member name, unquoted
	buf  []byte // scratch
}

// readHF decodes a tokenizer.json from r: the model's vocab and merges by
// streaming, the rest (small) with encoding/json.
func readHF(r io.Reader) (*hfFile, error) {
	h := &hfReader{dec: jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))}
	f := &hfFile{}
	if h.dec.PeekKind() == 'n' {
		if _, err := h.dec.ReadToken(); err != nil {
			return nil, h.syntax(err)
		}
		return f, h.end()
	}
	err := h.object("", func(string) error {
		if !strings.EqualFold(string(h.name), "model") {
			return h.small(f, "")
		}
		if f.Model != nil {
			return h.errHere("model: duplicate")
		}
		m, err := h.model()
		f.Model = m
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, h.end()
}

// small decodes the value of member h.name with encoding/json into dst,
// as if it were the only member of dst's object; prefix starts the
// member's field name in errors.
func (h *hfReader) small(dst any, prefix string) error {
	start := h.next()
	v, err := h.dec.ReadValue()
	if err != nil {
		return h.syntax(err)
	}
	one := append(strconv.AppendQuote([]byte{'{'}, string(h.name)), ':')
	one = append(append(one, v...), '}')
	if err := json.Unmarshal(one, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			err = fmt.Errorf("cannot use %s as %s", te.Value, te.Type)
		}
		return &posError{off: start, err: fmt.Errorf("%s%s: %w", prefix, h.name, err)}
	}
	return nil
}

// end checks that nothing follows the top-level value.
func (h *hfReader) end() error {
	off := h.next()
	if _, err := h.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return h.errAt(off, "unexpected data after the top-level value")
		}
		return h.syntax(err)
	}
	return nil
}

// object reads an object (or null, for which it calls nothing), calling
// member for each member after its name was read into h.name; member
// must read the value. field names the object in errors.
func (h *hfReader) object(field string, member func(field string) error) error {
	if err := h.open('{', field); err != nil {
		return err
	}
	for h.dec.PeekKind() != '}' {
		v, err := h.dec.ReadValue()
		if err != nil {
			return h.syntax(err)
		}
		if h.name, err = jsontext.AppendUnquote(h.name[:0], v); err != nil {
			return h.syntax(err)
		}
		if err := member(field); err != nil {
			return err
		}
	}
	_, err := h.dec.ReadToken()
	return h.syntax(err)
}

// open reads the opening delimiter of an object or array; field (a
// string or a mergeField) names the value in errors.
func (h *hfReader) open(kind jsontext.Kind, field any) error {
	if k := h.dec.PeekKind(); k != kind {
		if !isValueKind(k) {
			_, err := h.dec.ReadToken()
			return h.syntax(err)
		}
		return h.errHere("%v: want %s, got %s", field, kindName(kind), kindName(k))
	}
	_, err := h.dec.ReadToken()
	return h.syntax(err)
}

// isValueKind reports whether k starts a value (not an error or a closing
// delimiter, which ReadToken then reports).
func isValueKind(k jsontext.Kind) bool {
	return strings.IndexByte(`{["0ntf`, byte(k)) >= 0
}

// kindName names a JSON kind in errors.
func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return k.String()
}

// errHere is an error at the start of the next value.
func (h *hfReader) errHere(format string, args ...any) error {
	return h.errAt(h.next(), format, args...)
}

// errAt is an error at input offset off.
func (h *hfReader) errAt(off int64, format string, args ...any) error {
	return &posError{off: off, err: fmt.Errorf(format, args...)}
}

// next returns the input offset where the next token starts.
func (h *hfReader) next() int64 {
	h.dec.PeekKind()
	off := h.dec.InputOffset()
	for _, c := range h.dec.UnreadBuffer() {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ':' && c != ',' {
			break
		}
		off++
	}
	return off
}

// syntax turns a decoder error into a positioned error naming the field.
func (h *hfReader) syntax(err error) error {
	if err == nil {
		return nil
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		msg := se.Err
		if errors.Is(msg, io.ErrUnexpectedEOF) {
			msg = errors.New("unexpected end of JSON input")
		}
		if f := pointerField(se.JSONPointer); f != "" {
			msg = fmt.Errorf("%s: %w", f, msg)
		}
		return &posError{off: se.ByteOffset, err: msg}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &posError{off: h.dec.InputOffset(), err: errors.New("unexpected end of JSON input")}
	}
	return err
}

// pointerField writes a JSON pointer as a field path: model.merges[3].
// Names inside model.vocab (tokens) are left out.
func pointerField(p jsontext.Pointer) string {
	var sb strings.Builder
	var prev string
	for tok := range p.Tokens() {
		if prev == "vocab" {
			break
		}
		if _, err := strconv.Atoi(tok); err == nil && prev != "" {
			fmt.Fprintf(&sb, "[%s]", tok)
		} else {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(tok)
		}
		prev = tok
	}
	return sb.String()
}

// model reads the model object.
func (h *hfReader) model() (*hfModel, error) {
	if h.dec.PeekKind() == 'n' {
		_, err := h.dec.ReadToken()
		return nil, h.syntax(err)
	}
	m := &hfModel{}
	var sawVocab, sawMerges bool
	err := h.object("model", func(string) error {
		switch {
		case strings.EqualFold(string(h.name), "vocab"):
			if sawVocab {
				return h.errHere("model.vocab: duplicate")
			}
			sawVocab = true
			v, err := h.vocab()
			m.vocab = v
			return err
		case strings.EqualFold(string(h.name), "merges"):
			if sawMerges {
				return h.errHere("model.merges: duplicate")
			}
			sawMerges = true
			return h.merges(&m.merges)
		}
		return h.small(m, "model.")
	})
	return m, err
}

// vocab reads model.vocab: token text -> id.
func (h *hfReader) vocab() (*hfVocab, error) {
	if h.dec.PeekKind() == 'n' {
		_, err := h.dec.ReadToken()
		return nil, h.syntax(err)
	}
	v := &hfVocab{maxID: -1}
	err := h.object("model.vocab", func(string) error {
		off := h.next()
		val, err := h.dec.ReadValue()
		if err != nil {
			return h.syntax(err)
		}
		id, ok := parseID(val)
		if !ok {
			return h.errAt(off, "model.vocab: token %q: id %s: want an integer from 0 to %d", h.name, val, 1<<31-2)
		}
		v.maxID = max(v.maxID, id)
		var isRaw bool
		h.buf, isRaw = appendByteLevelDecode(h.buf[:0], h.name)
		if isRaw {
			v.b.both(id, h.buf)
			return nil
		}
		if v.odd == nil {
			v.odd = map[string]int32{}
		}
		if _, dup := v.odd[string(h.name)]; dup {
			return h.errHere("model.vocab: token %q: duplicate", h.name)
		}
		v.odd[string(h.name)] = id
		v.b.text(id, h.name)
		return nil
	})
	return v, err
}

// parseID parses a vocabulary id: a JSON integer from 0 to 2^31-2.
func parseID(v []byte) (int32, bool) {
	if len(v) == 0 || len(v) > 10 {
		return 0, false
	}
	n := int64(0)
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if n >= 1<<31-1 {
		return 0, false
	}
	return int32(n), true
}

// merges reads model.merges: entries "a b" or ["a", "b"].
func (h *hfReader) merges(m *hfMerges) error {
	if h.dec.PeekKind() == 'n' {
		_, err := h.dec.ReadToken()
		return h.syntax(err)
	}
	if err := h.open('[', "model.merges"); err != nil {
		return err
	}
	m.off = append(m.off, 0)
	for i := 0; h.dec.PeekKind() != ']'; i++ {
		if err := h.merge(m, i); err != nil {
			return err
		}
		if len(m.data) >= 1<<32-1 {
			return h.errHere("model.merges: too large")
		}
	}
	_, err := h.dec.ReadToken()
	return h.syntax(err)
}

// merge reads merges entry i into m.
func (h *hfReader) merge(m *hfMerges, i int) error {
	field := mergeField(i)
	switch k := h.dec.PeekKind(); k {
	case '"':
		v, err := h.dec.ReadValue()
		if err != nil {
			return h.syntax(err)
		}
		if h.buf, err = jsontext.AppendUnquote(h.buf[:0], v); err != nil {
			return h.syntax(err)
		}
		a, b, ok := bytes.Cut(h.buf, []byte{' '})
		if !ok || len(a) == 0 || len(b) == 0 || bytes.IndexByte(b, ' ') >= 0 {
			return h.errHere("%s: %q: want two tokens separated by one space", field, h.buf)
		}
		m.data = append(m.data, a...)
		m.off = append(m.off, uint32(len(m.data)))
		m.data = append(m.data, b...)
		m.off = append(m.off, uint32(len(m.data)))
		return nil
	case '[':
		if err := h.open('[', field); err != nil {
			return err
		}
		n := 0
		for ; h.dec.PeekKind() != ']'; n++ {
			if k := h.dec.PeekKind(); k != '"' {
				if !isValueKind(k) {
					_, err := h.dec.ReadToken()
					return h.syntax(err)
				}
				return h.errHere("%s[%d]: want a string, got %s", field, n, kindName(k))
			}
			v, err := h.dec.ReadValue()
			if err != nil {
				return h.syntax(err)
			}
			if n < 2 {
				if m.data, err = jsontext.AppendUnquote(m.data, v); err != nil {
					return h.syntax(err)
				}
				m.off = append(m.off, uint32(len(m.data)))
			}
		}
		if n != 2 {
			return h.errHere("%s: want 2 tokens, got %d", field, n)
		}
		_, err := h.dec.ReadToken()
		return h.syntax(err)
	default:
		if !isValueKind(k) {
			_, err := h.dec.ReadToken()
			return h.syntax(err)
		}
		return h.errHere("%s: want a string or a pair of strings, got %s", field, kindName(k))
	}
}

// mergeField names merges entry i in errors.
type mergeField int

func (i mergeField) String() string { return fmt.Sprintf("model.merges[%d]", int(i)) }

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// parseComponent decodes a normalizer, pre-tokenizer or decoder object.
func parseComponent(raw json.RawMessage, field string) (*hfComponent, error) {
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if c.Type == "" {
		return nil, fmt.Errorf("%s: missing \"type\"", field)
	}
	return &c, nil
}
