package command

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestOptionsFirst(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
		&cli.StringFlag{Name: "tokenizer", Aliases: []string{"t"}},
		&cli.IntFlag{Name: "limit"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
	}
	for _, tc := range []struct{ in, want, err string }{
		{in: "tool", want: "tool"},
		{in: "tool a.json", want: "tool a.json"},
		{in: "tool -o out a.json", want: "tool -o out a.json"},
		{in: "tool a.json -o out", want: "tool -o out a.json"},
		{in: "tool a.json --output=out b.json", want: "tool --output=out a.json b.json"},
		{in: "tool a.json -q b.json --limit -1", want: "tool -q --limit -1 a.json b.json"},
		{in: "tool - -q", want: "tool -q -"},
		{in: "tool a.json --quiet=false", want: "tool --quiet=false a.json"},
		// A run of short options takes a value when its last one does.
		{in: "tool a.json -qt gpt2", want: "tool -qt gpt2 a.json"},
		{in: "tool a.json -tq b.json", want: "tool -tq a.json b.json"},
		// "--" ends the options; it moves before every positional argument.
		{in: "tool a.json -- -o x", want: "tool -- a.json -o x"},
		{in: "tool a.json -q -- -o", want: "tool -q -- a.json -o"},
		{in: "tool -- -o", want: "tool -- -o"},
		{in: "tool a.json -o -- b", want: "tool -o -- a.json b"}, // as "tool -o -- a.json b" would: "--" is -o's value
		{in: "tool a.json --unknown b.json", want: "tool --unknown a.json b.json"},
		// A missing value must not take the file before it.
		{in: "tool a.json -o", err: "flag needs an argument: -o"},
		{in: "tool a.json -q --tokenizer", err: "flag needs an argument: --tokenizer"},
	} {
		got, err := OptionsFirst(flags, strings.Fields(tc.in))
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("OptionsFirst(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
		case err != nil:
			t.Errorf("OptionsFirst(%q): %v", tc.in, err)
		case !slices.Equal(got, strings.Fields(tc.want)):
			t.Errorf("OptionsFirst(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzOptionsFirst: reordering never loses, adds or duplicates an
// argument, keeps the program name first and keeps the order of the
// options and of the other arguments among themselves.
func FuzzOptionsFirst(f *testing.F) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
	}
	for _, s := range []string{"a.json -o out", "a -- -o x", "-qo x a b", "a -o", "- -q --output=x", "-- --"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := append([]string{"tool"}, strings.Fields(s)...)
		got, err := OptionsFirst(flags, in)
		if err != nil {
			return
		}
		if got[0] != "tool" {
			t.Fatalf("%q → %q: program name moved", in, got)
		}
		a, b := slices.Clone(in), slices.Clone(got)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("%q → %q: not a reordering", in, got)
		}
		// With "--", what follows it is the input's non-option arguments
		// in their order.
		if i := slices.Index(got, "--"); i >= 0 && !slices.Equal(got[i+1:], positional(in)) {
			t.Fatalf("%q → %q: arguments reordered", in, got)
		}
	})
}

// positional returns the arguments of in that are not options or
// their values (the fuzzed flags' option values, spelled -o, --output or
// a run of short options ending in o).
func positional(in []string) []string {
	var out []string
	for i := 1; i < len(in); i++ {
		switch a := in[i]; {
		case a == "--":
			return append(out, in[i+1:]...)
		case a == "--output" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "qo") == "" && strings.HasSuffix(a, "o"):
			i++
		case a == "-" || !strings.HasPrefix(a, "-"):
			out = append(out, a)
		}
	}
	return out
}
