package record

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-json"
)

// errEndOfInput is the problem of a line that ends inside a value.
var errEndOfInput = errors.New("unexpected end of JSON input")

// unmarshalRecord decodes one JSON line into r (which must be zero) with
// goccy/go-json. The error is the line's problem as "field: problem"
// where a field is to blame, else "invalid JSON at byte N: problem"
// (errEndOfInput for a line that ends too soon).
func unmarshalRecord(line []byte, r *Record, cols *Columns) (err error) {
	defer func() {
		if p := recover(); p != nil { // never seen; a decoder bug must not stop mtstats
			*r = Record{}
			err = fmt.Errorf("invalid JSON: decoder panic: %v", p)
		}
	}()
	if err := json.Unmarshal(line, cols.target(r)); err != nil {
		return lineError(line, err, cols)
	}
	return nil
}

// lineError turns the decoder's error for line into the line's problem.
func lineError(line []byte, err error, cols *Columns) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Error() == errEndOfInput.Error() {
			return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, errEndOfInput)
		}
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	// The line is valid JSON: find the member that does not fit its field
	// by decoding each on its own.
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil || obj == nil {
		return fmt.Errorf("(top level): %s", valueProblem(err))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	typ := reflect.TypeFor[Record]()
	for _, k := range keys {
		f := fieldByName[k]
		if f == nil { // keys match case-insensitively, as in encoding/json
			for i := range schema {
				if strings.EqualFold(schema[i].Name, k) {
					f = &schema[i]
					break
				}
			}
		}
		if f == nil || !cols.has(f.Index) {
			continue
		}
		v := reflect.New(typ.Field(f.Index).Type)
		if ferr := json.Unmarshal(obj[k], v.Interface()); ferr != nil {
			return fmt.Errorf("%s: %s", f.Name, valueProblem(ferr))
		}
	}
	return err
}

// valueProblem describes why a JSON value did not fit a Go value.
func valueProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil {
		return fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)
	}
	return err.Error()
}
