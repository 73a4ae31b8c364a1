package stats

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// FieldIndex maps a record's JSON field names to struct field indexes.
var FieldIndex = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[record.Record]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}()

// value is a record field as a filter or group key sees it.
type value struct {
	num    float64
	str    string
	t      time.Time
	isNum  bool
	isTime bool
	isNull bool
}

func (v value) String() string {
	switch {
	case v.isNull:
		return "null"
	case v.isNum:
		return strconv.FormatFloat(v.num, 'f', -1, 64)
	case v.isTime:
		return v.t.UTC().Format(time.RFC3339Nano)
	}
	return v.str
}

// FieldValue returns field i of r: numbers and booleans (0/1) as numbers,
// timestamps as times, nil pointers as null, lists by length.
func FieldValue(r *record.Record, i int) value {
	f := reflect.ValueOf(r).Elem().Field(i)
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return value{isNull: true}
		}
		f = f.Elem()
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64:
		return value{num: float64(f.Int()), isNum: true}
	case reflect.Float64:
		return value{num: f.Float(), isNum: true}
	case reflect.Bool:
		if f.Bool() {
			return value{num: 1, isNum: true, str: "true"}
		}
		return value{num: 0, isNum: true, str: "false"}
	case reflect.String:
		return value{str: f.String()}
	case reflect.Slice:
		return value{num: float64(f.Len()), isNum: true}
	}
	if t, ok := f.Interface().(time.Time); ok {
		return value{t: t, isTime: true}
	}
	return value{str: fmt.Sprint(f.Interface())}
}

// fieldKind is how a --where value is parsed and compared.
type fieldKind int

const (
	kindString   fieldKind = iota
	kindNumber             // ints, floats, list lengths
	kindBool               // true/false
	kindTime               // RFC 3339 timestamps, compared as instants
	kindDuration           // _ns fields: a number of ns or a duration with unit
)

// kindOf returns the kind of the record field at index i.
func kindOf(i int) fieldKind {
	f := reflect.TypeFor[record.Record]().Field(i)
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return kindTime
	case t.Kind() == reflect.Bool:
		return kindBool
	case t.Kind() == reflect.String:
		return kindString
	case t.Kind() == reflect.Slice:
		return kindNumber // lists compare by length
	case strings.HasSuffix(name, "_ns"):
		return kindDuration
	}
	return kindNumber
}

// cond is one comparison of a --where expression.
type cond struct {
	Field int
	op    string
	val   value
}

// Filter is a parsed --where expression: comparisons joined by &&.
type Filter []cond

// ops are the comparison operators, longest first.
var ops = []string{"==", "!=", "<=", ">=", "<", ">", "="}

// ParseFilter parses "field op value [&& field op value ...]".
//
// Fields are the record's JSON names; a duration field may be named
// without its _ns suffix (ttft for ttft_ns). Ops are == != < <= > >= (= is
// ==). The value must fit the field: a number for numbers and lists (which
// compare by length); true or false for booleans; an RFC 3339 time (or a
// date, meaning its midnight UTC) for timestamps, compared as instants; for
// durations, a Go duration with unit (500ms, 2s) or, on a name with _ns, a
// bare number of nanoseconds; for strings, any token, or a Go-quoted string
// holding spaces or operators. null matches a field the server did not
// report (== and != only). Anything else, including a leftover operator
// (turn>>1), is an error.
func ParseFilter(s string) (Filter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var f Filter
	p := &filterParser{s: s}
	for {
		c, err := p.cond()
		if err != nil {
			return nil, fmt.Errorf("where: %q: %w", s, err)
		}
		f = append(f, c)
		p.space()
		if p.i == len(s) {
			return f, nil
		}
		if !strings.HasPrefix(s[p.i:], "&&") {
			return nil, fmt.Errorf("where: %q: at byte %d: want && or the end after a comparison, got %q", s, p.i, rest(s[p.i:]))
		}
		p.i += 2
	}
}

// filterParser scans a --where expression.
type filterParser struct {
	s string
	i int
}

func (p *filterParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// cond parses one "field op value".
func (p *filterParser) cond() (cond, error) {
	var c cond
	p.space()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || '0' <= p.s[p.i] && p.s[p.i] <= '9' || 'a' <= p.s[p.i] && p.s[p.i] <= 'z') {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return c, fmt.Errorf("at byte %d: want a field name, got %q", p.i, rest(p.s[p.i:]))
	}
	idx, ok := FieldIndex[name]
	bare := false // a duration field named without _ns
	if !ok {
		if idx, ok = FieldIndex[name+"_ns"]; !ok || kindOf(idx) != kindDuration {
			return c, fmt.Errorf("unknown field %q", name)
		}
		bare = true
	}
	c.Field = idx
	p.space()
	for _, op := range ops {
		if strings.HasPrefix(p.s[p.i:], op) {
			c.op = op
			break
		}
	}
	if c.op == "" {
		return c, fmt.Errorf("after %s: want an operator (== != < <= > >=), got %q", name, rest(p.s[p.i:]))
	}
	p.i += len(c.op)
	if c.op == "=" {
		c.op = "=="
	}
	p.space()
	raw, quoted, err := p.value()
	if err != nil {
		return c, fmt.Errorf("%s %s: %w", name, c.op, err)
	}
	c.val, err = parseValue(kindOf(idx), raw, quoted, bare)
	if err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	if c.val.isNull && c.op != "==" && c.op != "!=" {
		return c, fmt.Errorf("%s: null compares only with == or !=", name)
	}
	return c, nil
}

// value scans a value: a Go-quoted string, or a bare token that runs to
// white space, && or the end and starts with no operator character.
func (p *filterParser) value() (raw string, quoted bool, err error) {
	s := p.s[p.i:]
	if s != "" && (s[0] == '"' || s[0] == '`') {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", false, fmt.Errorf("unterminated or invalid quoted string %q", rest(s))
		}
		p.i += len(q)
		uq, _ := strconv.Unquote(q)
		return uq, true, nil
	}
	n := 0
	for n < len(s) && s[n] != ' ' && s[n] != '\t' && !strings.HasPrefix(s[n:], "&&") {
		n++
	}
	raw = s[:n]
	switch {
	case raw == "":
		return "", false, fmt.Errorf("missing value")
	case strings.ContainsAny(raw[:1], "<>=!&|"):
		return "", false, fmt.Errorf("value %q starts with an operator", raw)
	}
	p.i += n
	return raw, false, nil
}

// rest returns the start of s for an error message.
func rest(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	if s == "" {
		return "end of expression"
	}
	return s
}

// parseValue parses raw as a value of a field of kind k; bare is set for a
// duration field named without _ns, which needs a unit.
func parseValue(k fieldKind, raw string, quoted, bare bool) (value, error) {
	if !quoted && raw == "null" {
		return value{isNull: true}, nil
	}
	switch k {
	case kindString:
		return value{str: raw}, nil
	case kindBool:
		switch raw {
		case "true":
			return value{num: 1, isNum: true}, nil
		case "false":
			return value{num: 0, isNum: true}, nil
		}
		return value{}, fmt.Errorf("%q is not true or false", raw)
	case kindTime:
		if t, err := time.Parse(time.RFC3339Nano, raw); err == nil {
			return value{t: t, isTime: true}, nil
		}
		if t, err := time.Parse(time.DateOnly, raw); err == nil {
			return value{t: t, isTime: true}, nil
		}
		return value{}, fmt.Errorf("%q is not an RFC 3339 time (2026-11-23T18:21:08Z, 2026-11-23T19:21:08.5+01:00) or a date (2026-11-23)", raw)
	case kindDuration:
		if d, err := time.ParseDuration(raw); err == nil {
			return value{num: float64(d.Nanoseconds()), isNum: true}, nil
		}
		if !bare {
			if x, err := strconv.ParseFloat(raw, 64); err == nil {
				return value{num: x, isNum: true}, nil
			}
			return value{}, fmt.Errorf("%q is neither a duration with unit (500ms, 2s) nor a number of nanoseconds", raw)
		}
		return value{}, fmt.Errorf("%q is not a duration with unit (500ms, 2s, 1m30s)", raw)
	}
	if x, err := strconv.ParseFloat(raw, 64); err == nil {
		return value{num: x, isNum: true}, nil
	}
	return value{}, fmt.Errorf("%q is not a number", raw)
}

// Match reports whether r satisfies every comparison.
func (f Filter) Match(r *record.Record) bool {
	for _, c := range f {
		if !c.match(FieldValue(r, c.Field)) {
			return false
		}
	}
	return true
}

func (c cond) match(v value) bool {
	if v.isNull || c.val.isNull {
		eq := v.isNull == c.val.isNull
		switch c.op {
		case "==":
			return eq
		case "!=":
			return !eq
		}
		return false
	}
	var cmp int
	switch {
	case v.isTime:
		cmp = v.t.Compare(c.val.t)
	case v.isNum:
		cmp = compare(v.num, c.val.num)
	default:
		cmp = strings.Compare(v.str, c.val.str)
	}
	switch c.op {
	case "==":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	}
	return cmp >= 0
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
