package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// Reading the CSV traces (burstgpt.go, azure.go): a header row, then
// rows read by column name.

// csvTable reads a CSV file with a header row.
type csvTable struct {
	r    *csv.Reader
	name string
	col  map[string]int
}

// newCSVTable reads the header and checks that it has the columns
// required.
func newCSVTable(r io.Reader, name string, required ...string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &jsonl.Error{File: name, Line: 1, Err: errors.New("header: missing (empty file)")}
		}
		return nil, csvError(name, err)
	}
	t := &csvTable{r: cr, name: name, col: map[string]int{}}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		t.col[strings.TrimSpace(h)] = i
	}
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			return nil, &jsonl.Error{File: name, Line: 1, Err: fmt.Errorf("header: no %q column", c)}
		}
	}
	return t, nil
}

// each calls f with each row and its line; an error comes back as
// file:line: field: problem.
func (t *csvTable) each(f func(line int, rec []string) error) error {
	for {
		rec, err := t.r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvError(t.name, err)
		}
		line, _ := t.r.FieldPos(0)
		if err := f(line, rec); err != nil {
			return &jsonl.Error{File: t.name, Line: line, Err: err}
		}
	}
}

// get returns the column named c of rec, "" when the file has none.
func (t *csvTable) get(rec []string, c string) string {
	if i, ok := t.col[c]; ok {
		return strings.TrimSpace(rec[i])
	}
	return ""
}

// numbers parses the timestamp (seconds) and the two token counts of rec.
func (t *csvTable) numbers(rec []string, f traceFields) (ts *float64, in, out *int, err error) {
	v, err := strconv.ParseFloat(t.get(rec, f.timestamp), 64)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %q is not a number of seconds", f.timestamp, t.get(rec, f.timestamp))
	}
	if in, err = t.count(rec, f.input); err != nil {
		return nil, nil, nil, err
	}
	if out, err = t.count(rec, f.output); err != nil {
		return nil, nil, nil, err
	}
	return &v, in, out, nil
}

// count parses the token count in column c.
func (t *csvTable) count(rec []string, c string) (*int, error) {
	n, err := strconv.Atoi(t.get(rec, c))
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a whole number", c, t.get(rec, c))
	}
	return &n, nil
}

// csvError turns a csv.ParseError into file:line: column N: problem.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &jsonl.Error{File: name, Line: pe.Line, Err: fmt.Errorf("column %d: %v", pe.Column, pe.Err)}
	}
	return &jsonl.Error{File: name, Err: err}
}

// csvHeaderHas reports whether the first line of head is a CSV header
// with every column of cols.
func csvHeaderHas(head []byte, cols ...string) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	rec, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(line, []byte("\ufeff")))).Read()
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, c := range rec {
		have[strings.TrimSpace(c)] = true
	}
	for _, c := range cols {
		if !have[c] {
			return false
		}
	}
	return true
}
