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
