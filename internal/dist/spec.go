package dist

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unit says what a distribution's values measure, which decides how
// Parse reads its numbers.
type Unit int

const (
	// Count values are token or turn counts: plain numbers only.
	Count Unit = iota
	// Seconds values are durations: a number with a Go duration unit
	// ("500ms", "2s", "1m30s") or a bare number of seconds.
	Seconds
)

// Syntax documents the flag syntax of distributions (shown in --help
// and docs/mtgen.md).
const Syntax = `A distribution is written NAME:ARGS, with ARGS either positional
(colon-separated) or key=value pairs (comma-separated); a bare number N
means constant:N.
  constant:V                 always V                      (key: value)
  uniform:MIN:MAX            integers MIN..MAX inclusive; continuous if a
                             bound has a decimal point     (keys: min, max)
  lognormal:average=A[,median_ratio=R][,max=M]
                             mean A, median A*R (R in (0,1), default 0.85)
  lognormal:mean=MU,sigma=S[,max=M]
                             exp(normal(MU, S)), as numpy.random.lognormal
  zipf:ALPHA[:MAX]           zeta distribution, ALPHA > 1  (keys: alpha, max)
  poisson:ALPHA[:MAX]        Poisson with mean ALPHA       (keys: alpha, max)
  exponential:MEAN[:MAX]     exponential with mean MEAN    (keys: mean, max)
MAX clamps samples (larger ones become MAX, as in vLLM). avg is accepted
for average. Counts are rounded half to even. Durations take Go units
(250ms, 2s, 1m); a bare number is seconds.`

// positional gives each kind's positional parameter names.
var positional = map[Kind][]string{
	Constant:    {"value"},
	Uniform:     {"min", "max"},
	Lognormal:   {"average", "median_ratio", "max"},
	Zipf:        {"alpha", "max"},
	Poisson:     {"alpha", "max"},
	Exponential: {"mean", "max"},
}

// kindAliases maps the accepted spellings of distribution names.
var kindAliases = map[string]Kind{
	"constant": Constant, "const": Constant,
	"uniform":     Uniform,
	"lognormal":   Lognormal,
	"zipf":        Zipf,
	"poisson":     Poisson,
	"exponential": Exponential, "exp": Exponential,
}

// Parse parses a distribution in the flag syntax (see Syntax), e.g.
// "uniform:4:10", "lognormal:avg=500,median_ratio=0.8,max=2000",
// "exponential:mean=2s" (with unit Seconds) or "100".
func Parse(spec string, unit Unit) (Dist, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return Dist{}, errors.New("empty distribution (want e.g. constant:100 or uniform:4:10)")
	}
	name, args, hasArgs := strings.Cut(s, ":")
	if !hasArgs {
		if _, err := ParseValue(s, unit); err == nil {
			name, args = "constant", s
		}
	}
	kind, ok := kindAliases[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		_, err := Build(Kind(name), nil)
		return Dist{}, fmt.Errorf("%q: %w", s, err)
	}
	var params []Param
	if strings.Contains(args, "=") {
		for _, kv := range strings.Split(args, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			if !ok {
				return Dist{}, fmt.Errorf("%q: %q is not key=value", s, kv)
			}
			if k == "avg" {
				k = "average"
			}
			p, err := ParseValue(v, unit)
			if err != nil {
				return Dist{}, fmt.Errorf("%q: %s: %w", s, k, err)
			}
			p.Key = k
			params = append(params, p)
		}
	} else if strings.TrimSpace(args) != "" {
		vals := strings.Split(args, ":")
		names := positional[kind]
		if len(vals) > len(names) {
			return Dist{}, fmt.Errorf("%q: %s takes at most %d positional values (%s)", s, kind, len(names), strings.Join(names, ":"))
		}
		for i, v := range vals {
			p, err := ParseValue(v, unit)
			if err != nil {
				return Dist{}, fmt.Errorf("%q: %s: %w", s, names[i], err)
			}
			p.Key = names[i]
			params = append(params, p)
		}
	}
	d, err := Build(kind, params)
	if err != nil {
		return Dist{}, fmt.Errorf("%q: %w", s, err)
	}
	return d, nil
}

// ParseValue reads one number; with unit Seconds it may carry a duration
// unit, and is returned in seconds.
func ParseValue(v string, unit Unit) (Param, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return Param{}, errors.New("empty value")
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Param{}, fmt.Errorf("%q is not a finite number", v)
		}
		// Durations are continuous: uniform:1:3 of seconds is not 1, 2 or 3.
		return Param{Val: f, IsInt: unit == Count && !strings.ContainsAny(v, ".eEnNiI")}, nil
	}
	if unit == Seconds {
		d, err := time.ParseDuration(v)
		if err != nil {
			return Param{}, fmt.Errorf("%q is not a number or a duration (e.g. 2s, 250ms)", v)
		}
		return Param{Val: d.Seconds()}, nil
	}
	return Param{}, fmt.Errorf("%q is not a number", v)
}
