package stats

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// fieldIndex maps a record's JSON field names to struct field indexes.
var fieldIndex = func() map[string]int {
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
	isNum  bool
	isNull bool
}

func (v value) String() string {
	switch {
	case v.isNull:
		return "null"
	case v.isNum:
		return strconv.FormatFloat(v.num, 'f', -1, 64)
	}
	return v.str
}

// fieldValue returns field i of r: numbers and booleans (0/1) as numbers,
// timestamps as RFC 3339 strings, nil pointers as null, lists by length.
func fieldValue(r *record.Record, i int) value {
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
		return value{str: t.UTC().Format(time.RFC3339Nano)}
	}
	return value{str: fmt.Sprint(f.Interface())}
}

// cond is one comparison of a --where expression.
type cond struct {
	field int
	op    string
	val   value
}

// Filter is a parsed --where expression: comparisons joined by &&.
type Filter []cond

var ops = []string{"==", "!=", "<=", ">=", "<", ">", "="}

// ParseFilter parses "field op value [&& ...]". Fields are the record's
// JSON names; ops are == != < <= > >= (= is ==); values are numbers,
// true/false, null, or strings (optionally quoted). Lists compare by
// length, timestamps as RFC 3339 strings.
func ParseFilter(s string) (Filter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var f Filter
	for part := range strings.SplitSeq(s, "&&") {
		part = strings.TrimSpace(part)
		var c cond
		at := -1
		for _, op := range ops {
			if i := strings.Index(part, op); i > 0 && (at < 0 || i < at) {
				at, c.op = i, op
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("where: %q: want field op value (ops: == != < <= > >=)", part)
		}
		name, raw := strings.TrimSpace(part[:at]), strings.TrimSpace(part[at+len(c.op):])
		idx, ok := fieldIndex[name]
		if !ok {
			return nil, fmt.Errorf("where: %q: unknown field %q", part, name)
		}
		c.field = idx
		if c.op == "=" {
			c.op = "=="
		}
		switch uq, err := strconv.Unquote(raw); {
		case err == nil:
			c.val = value{str: uq}
		case raw == "null":
			c.val = value{isNull: true}
		case raw == "true":
			c.val = value{num: 1, isNum: true}
		case raw == "false":
			c.val = value{num: 0, isNum: true}
		default:
			if x, err := strconv.ParseFloat(raw, 64); err == nil {
				c.val = value{num: x, isNum: true}
			} else if d, err := time.ParseDuration(raw); err == nil && strings.HasSuffix(name, "_ns") {
				c.val = value{num: float64(d.Nanoseconds()), isNum: true}
			} else {
				c.val = value{str: raw}
			}
		}
		f = append(f, c)
	}
	return f, nil
}

// Match reports whether r satisfies every comparison.
func (f Filter) Match(r *record.Record) bool {
	for _, c := range f {
		if !c.match(fieldValue(r, c.field)) {
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
	case v.isNum && c.val.isNum:
		cmp = compare(v.num, c.val.num)
	case v.isNum:
		if x, err := strconv.ParseFloat(c.val.str, 64); err == nil {
			cmp = compare(v.num, x)
		} else {
			cmp = strings.Compare(v.String(), c.val.str)
		}
	default:
		cmp = strings.Compare(v.str, c.val.String())
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
