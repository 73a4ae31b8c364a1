package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// JSONHead is what the start of a JSON or JSONL input shows: whether it
// is a JSON list, and the top-level keys of its first object (the list's
// first element, or the first line). Detect functions of JSON formats use
// it; it never fails, a head cut anywhere gives the keys seen before the
// cut.
type JSONHead struct {
	// List: the first value is a JSON array.
	List bool
	// Object: the first value (list element) is an object.
	Object bool
	// Keys maps each top-level key of that object seen in the head to its
	// value when a scalar (strings unquoted, numbers as written), "" for
	// objects, arrays and values cut off by the end of the head.
	Keys map[string]string
	// Err is a JSON syntax error met before the end of the head, located
	// by line ("line 3: invalid character ..."); nil if none.
	Err error
}

// Has reports whether the first object has every key of keys.
func (h JSONHead) Has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := h.Keys[k]; !ok {
			return false
		}
	}
	return true
}

// SniffJSON reads the head of a JSON or JSONL input (see JSONHead).
func SniffJSON(head []byte) JSONHead {
	h := JSONHead{}
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	token := func() (json.Token, bool) {
		tok, err := dec.Token()
		var se *json.SyntaxError
		if errors.As(err, &se) && h.Err == nil {
			// A syntax error, not the cut at the end of the head.
			line := 1 + bytes.Count(head[:min(int(se.Offset), len(head))], []byte("\n"))
			h.Err = fmt.Errorf("line %d: %w", line, err)
		}
		return tok, err == nil
	}
	tok, ok := token()
	if ok && tok == json.Delim('[') {
		h.List = true
		tok, ok = token()
	}
	if !ok || tok != json.Delim('{') {
		return h
	}
	h.Object, h.Keys = true, map[string]string{}
	for {
		tok, ok := token()
		key, isKey := tok.(string)
		if !ok || !isKey {
			return h // '}' or the end of the head
		}
		h.Keys[key] = ""
		if tok, ok = token(); !ok {
			return h
		}
		switch v := tok.(type) {
		case json.Delim: // '{' or '[': skip to its match
			for depth := 1; depth > 0; {
				tok, ok := token()
				if !ok {
					return h
				}
				switch tok {
				case json.Delim('{'), json.Delim('['):
					depth++
				case json.Delim('}'), json.Delim(']'):
					depth--
				}
			}
		case string:
			h.Keys[key] = v
		case nil:
		default:
			h.Keys[key] = fmt.Sprint(v)
		}
	}
}
