package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jnode is one JSON value with the byte offset where it starts, so that
// config errors can name the line. Object members keep their file order.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	off   int64
	str   string // string value or number text
	b     bool
	keys  []string
	koffs []int64
	vals  []*jnode
	elems []*jnode
}

// jsonError is a syntax or structure error at a byte offset.
type jsonError struct {
	off int64
	msg string
}

func (e *jsonError) Error() string { return e.msg }

// parseJSONTree parses data into a tree, rejecting duplicate object keys
// and trailing data.
func parseJSONTree(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &treeParser{dec: dec, data: data}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &jsonError{off: p.start(), msg: "unexpected data after the top-level value"}
	}
	return n, nil
}

type treeParser struct {
	dec   *json.Decoder
	data  []byte
	depth int
}

// start returns the offset of the next token: the decoder's offset moved
// past whitespace and the separators ',' and ':'.
func (p *treeParser) start() int64 {
	o := p.dec.InputOffset()
	for o < int64(len(p.data)) {
		switch p.data[o] {
		case ' ', '\t', '\r', '\n', ',', ':':
			o++
			continue
		}
		break
	}
	return o
}

func (p *treeParser) token() (json.Token, int64, error) {
	off := p.start()
	t, err := p.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, se.Offset, &jsonError{off: se.Offset, msg: "invalid JSON: " + se.Error()}
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, int64(len(p.data)), &jsonError{off: int64(len(p.data)), msg: "invalid JSON: unexpected end of input"}
		}
		return nil, off, &jsonError{off: off, msg: "invalid JSON: " + err.Error()}
	}
	return t, off, nil
}

func (p *treeParser) value() (*jnode, error) {
	t, off, err := p.token()
	if err != nil {
		return nil, err
	}
	return p.valueFrom(t, off)
}

func (p *treeParser) valueFrom(t json.Token, off int64) (*jnode, error) {
	n := &jnode{off: off}
	switch v := t.(type) {
	case json.Delim:
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > 64 {
			return nil, &jsonError{off: off, msg: "JSON nested too deeply"}
		}
		switch v {
		case '{':
			n.kind = 'o'
			seen := map[string]bool{}
			for {
				kt, koff, err := p.token()
				if err != nil {
					return nil, err
				}
				if d, ok := kt.(json.Delim); ok && d == '}' {
					return n, nil
				}
				k, ok := kt.(string)
				if !ok {
					return nil, &jsonError{off: koff, msg: "invalid JSON: object key is not a string"}
				}
				if seen[k] {
					return nil, &jsonError{off: koff, msg: fmt.Sprintf("%s: given twice", k)}
				}
				seen[k] = true
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				n.keys, n.koffs, n.vals = append(n.keys, k), append(n.koffs, koff), append(n.vals, val)
			}
		case '[':
			n.kind = 'a'
			for {
				et, eoff, err := p.token()
				if err != nil {
					return nil, err
				}
				if d, ok := et.(json.Delim); ok && d == ']' {
					return n, nil
				}
				e, err := p.valueFrom(et, eoff)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
		}
		return nil, &jsonError{off: off, msg: "invalid JSON: unexpected " + v.String()}
	case string:
		n.kind, n.str = 's', v
	case json.Number:
		n.kind, n.str = 'n', string(v)
	case bool:
		n.kind, n.b = 'b', v
	case nil:
		n.kind = 'z'
	}
	return n, nil
}

// kindName describes a node's JSON type for error messages.
func (n *jnode) kindName() string {
	switch n.kind {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}
