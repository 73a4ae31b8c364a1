package command

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// OptionsFirst returns args (args[0] is the program name) with every option
// that follows a positional argument moved before the first one, so that
// "mtconvert data.json -o out.jsonl" means "mtconvert -o out.jsonl
// data.json", as most users type it. urfave/cli stops parsing options at the
// first positional argument; without this, "-o" would be read as a file
// name after the other inputs had been processed. An option's value moves
// with it when the option takes one and is not written NAME=VALUE; a run
// of short options ("-qt NAME") takes a value when its last one does. "-"
// is a positional argument (stdin) and "--" ends the options: what follows
// it stays positional, after the positional arguments before it. Unknown
// options move too, so that they fail as usage errors before any input is
// read. An option that needs a value but ends the arguments is an error
// (it would otherwise take the file before it as its value: "mtconvert
// data.json -o" must not write to data.json).
func OptionsFirst(flags []cli.Flag, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	takesValue := map[string]bool{}
	for _, f := range flags {
		v := true
		if tv, ok := f.(cli.DocGenerationFlag); ok {
			v = tv.TakesValue()
		}
		for _, n := range f.Names() {
			takesValue[n] = v
		}
	}
	var options, positional, rest []string
	args1 := args[1:]
	for i := 0; i < len(args1); i++ {
		a := args1[i]
		if a == "--" {
			rest = args1[i:]
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		options = append(options, a)
		if strings.Contains(a, "=") || !needsValue(takesValue, a) {
			continue
		}
		if i+1 == len(args1) {
			return nil, fmt.Errorf("flag needs an argument: %s", a)
		}
		i++
		options = append(options, args1[i])
	}
	out := make([]string, 0, len(args)+1)
	out = append(out, args[0])
	out = append(out, options...)
	if rest != nil {
		out = append(out, "--")
		rest = rest[1:]
	}
	out = append(out, positional...)
	return append(out, rest...), nil
}

// needsValue reports whether option a (with its dashes, no "=") takes a
// value: a known option that does, or a run of known one-letter options
// ("-qt") whose last one does.
func needsValue(takesValue map[string]bool, a string) bool {
	name := strings.TrimLeft(a, "-")
	if v, ok := takesValue[name]; ok {
		return v
	}
	if strings.HasPrefix(a, "--") || len(name) < 2 {
		return false
	}
	for _, c := range name {
		if _, ok := takesValue[string(c)]; !ok {
			return false
		}
	}
	return takesValue[name[len(name)-1:]]
}
