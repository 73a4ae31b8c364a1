// Package cliflag is the one flag vocabulary of the mtkit tools: the
// constructors of every flag that more than one tool has (one meaning, one
// type, one usage text per name), the duration and seed parsers all tools
// use, hidden aliases that keep old spellings working, and the help
// conventions (a placeholder on every flag that takes a value, a default
// shown once). Each constructor binds the flag to a field of the tool's
// options struct. docs/flags.md is the user's view of it.
package cliflag

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/duration"
)

// ParseDuration is duration.Parse, the one duration syntax of every
// tool: a Go duration (500ms, 2s, 1m30s) or a bare number of seconds.
func ParseDuration(s string) (time.Duration, error) { return duration.Parse(s) }

// ParseSeed reads a seed: a whole number from 0 to 2^64-1, in decimal.
func ParseSeed(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a seed (want a whole number from 0 to %d)", s, uint64(math.MaxUint64))
	}
	return v, nil
}

// durationValue is a cli.Generic that parses with ParseDuration into dst.
type durationValue struct{ dst *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*v.dst = d
	return nil
}

// String is empty for 0, so that help shows no "(default: 0s)" for a
// duration that is off unless given.
func (v durationValue) String() string {
	if v.dst == nil || *v.dst == 0 {
		return ""
	}
	return v.dst.String()
}

// seedValue is a cli.Generic that parses with ParseSeed into dst.
type seedValue struct{ dst *uint64 }

func (v seedValue) Set(s string) error {
	n, err := ParseSeed(s)
	if err != nil {
		return err
	}
	*v.dst = n
	return nil
}

func (v seedValue) String() string {
	if v.dst == nil {
		return ""
	}
	return strconv.FormatUint(*v.dst, 10)
}
