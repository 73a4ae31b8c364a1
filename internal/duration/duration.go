// Package duration is the one syntax of durations on mtkit's command
// lines: a Go duration (500ms, 2s, 1m30s, 1h) or a bare number, which is
// seconds, in every flag of every tool (vLLM's flags and mtkit's think
// times count seconds too). Places where a bare number would be ambiguous
// (mtstats --slo limits) refuse it instead; see IsBareNumber.
package duration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Parse reads a duration: a Go duration (500ms, 2s,
// 1m30s, 1h) or a bare number, which is seconds (600, 0.5), in every
// tool. Negative, NaN and infinite values and values above about 292
// years are errors.
func Parse(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty duration (want e.g. 500ms, 2s, 1m; a bare number is seconds)")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return 0, fmt.Errorf("%q is not a finite number of seconds", s)
		case f < 0:
			return 0, fmt.Errorf("%q is negative", s)
		case f*float64(time.Second) >= math.MaxInt64:
			return 0, fmt.Errorf("%q seconds is too long", s)
		}
		return time.Duration(math.Round(f * float64(time.Second))), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 500ms, 2s, 1m30s; a bare number is seconds)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// IsBareNumber reports whether s is a number without a unit, which Parse
// reads as seconds.
func IsBareNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}
