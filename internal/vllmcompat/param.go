package vllmcompat

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// WarmupRuntimeParam is the parameter that carries the warmup's runtime
// (vLLM's warmup_runtime_sec) from mtrun -e to mtstats' --xlsx-param; the
// workbook writes it beside each block's runtime, not in the parameter
// rows.
const WarmupRuntimeParam = "warmup_runtime_sec"

// Param is one named value of a parameter row of vLLM's workbook.
type Param struct {
	Name  string
	Value any
}

// String is p as ParseParam reads it: NAME=VALUE, the value as JSON.
func (p Param) String() string {
	b, err := json.Marshal(p.Value)
	if err != nil {
		b = []byte(strconv.Quote(fmt.Sprint(p.Value)))
	}
	return p.Name + "=" + string(b)
}

// ParseParam reads NAME=VALUE (mtstats' --xlsx-param). A VALUE that is a
// JSON number, string, boolean or null is that value (an integer as int64,
// or uint64 above int64's range; null is vLLM's None, an empty cell);
// anything else is the text itself, so model=llama is the string "llama".
func ParseParam(s string) (Param, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.TrimSpace(name) != name {
		return Param{}, fmt.Errorf("%q: want NAME=VALUE", s)
	}
	p := Param{Name: name, Value: value}
	if !json.Valid([]byte(value)) {
		return p, nil
	}
	d := json.NewDecoder(strings.NewReader(value))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return p, nil
	}
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			p.Value = i
		} else if u, err := strconv.ParseUint(x.String(), 10, 64); err == nil {
			p.Value = u
		} else if f, err := x.Float64(); err == nil {
			p.Value = f
		}
	case string, bool, nil:
		p.Value = x
	}
	return p, nil
}

// Number is p's value as a float64, if it is a number.
func (p Param) Number() (float64, bool) {
	switch x := p.Value.(type) {
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Params is a repeatable flag of Params (flag.Value): each Set reads one
// NAME=VALUE with ParseParam, commas included.
type Params []Param

// Set appends the Param s names.
func (ps *Params) Set(s string) error {
	p, err := ParseParam(s)
	if err != nil {
		return err
	}
	*ps = append(*ps, p)
	return nil
}

func (ps *Params) String() string {
	if ps == nil {
		return ""
	}
	out := make([]string, len(*ps))
	for i, p := range *ps {
		out[i] = p.String()
	}
	return strings.Join(out, " ")
}
