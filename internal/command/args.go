package command

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// OptionsFirst returns args (args[0] is the program name) with every option
// that follows a positional argument moved before the first one, so that
// "mtconvert data.json -o out.jsonl" means "mtconvert -o out.jsonl
// data.json", as most users type it. urfave/cli stops parsing options at the
// first positional argument; without this, "-o" would be read as a file
// name after the other inputs had been processed. An option's value moves
// with it when the option takes one and is not written NAME=VALUE. "-" is a
// positional argument (stdin) and "--" ends the options: what follows it is
// kept as it is. Unknown options move too, so that they fail as usage errors
// before any input is read.
func OptionsFirst(flags []cli.Flag, args []string) []string {
	if len(args) < 2 {
		return args
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
	var options, positional []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		options = append(options, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && i+1 < len(rest) {
			i++
			options = append(options, rest[i])
		}
	}
	out := make([]string, 0, len(args))
	out = append(out, args[0])
	out = append(out, options...)
	return append(out, positional...)
}
