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
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

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

// dest returns where the value is parsed to.
func (v durationValue) dest() any { return v.dst }
func (v seedValue) dest() any     { return v.dst }

// Dest returns the field flag f is bound to (its Destination, or the
// variable a cliflag value parses to), nil when it has none.
func Dest(f cli.Flag) any {
	if g, ok := f.(*cli.GenericFlag); ok {
		if d, ok := g.Value.(interface{ dest() any }); ok {
			return d.dest()
		}
		return nil
	}
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	d := v.Elem().FieldByName("Destination")
	if !d.IsValid() || d.IsNil() {
		return nil
	}
	return d.Interface()
}

// Given returns a function that reports whether the flag bound to dst
// (a field of the tool's options, see Dest) was given, on the command
// line, by an alias or from its environment variable: c.IsSet without a
// name to misspell. It panics when no flag of flags is bound to dst.
func Given(c *cli.Context, flags []cli.Flag) func(dst any) bool {
	names := destNamesOf(flags)
	return func(dst any) bool { return c.IsSet(names.of(dst)) }
}

// FirstGiven returns the name of the first flag of flags bound to one of
// dsts that was given (as Given says), "" when none was.
func FirstGiven(c *cli.Context, flags []cli.Flag, dsts ...any) string {
	names := destNamesOf(flags)
	for _, d := range dsts {
		if n := names.of(d); c.IsSet(n) {
			return n
		}
	}
	return ""
}

// destNames maps each flag's Dest to its name.
type destNames map[any]string

func destNamesOf(flags []cli.Flag) destNames {
	names := destNames{}
	for _, f := range flags {
		if d := Dest(f); d != nil {
			names[d] = f.Names()[0]
		}
	}
	return names
}

func (n destNames) of(dst any) string {
	name, ok := n[dst]
	if !ok {
		panic(fmt.Sprintf("cliflag: no flag is bound to %T %p", dst, dst))
	}
	return name
}

// Unbound returns the names of the visible flags that are bound to no
// field: flags a tool could only read back by name.
func Unbound(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		if Dest(f) == nil {
			out = append(out, f.Names()[0])
		}
	}
	return out
}
