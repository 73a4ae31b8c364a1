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
		&cli.IntFlag{Name: "limit"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
	}
	for _, tc := range []struct{ in, want string }{
		{"tool", "tool"},
		{"tool a.json", "tool a.json"},
		{"tool -o out a.json", "tool -o out a.json"},
		{"tool a.json -o out", "tool -o out a.json"},
		{"tool a.json --output=out b.json", "tool --output=out a.json b.json"},
		{"tool a.json -q b.json --limit -1", "tool -q --limit -1 a.json b.json"},
		{"tool - -q", "tool -q -"},
		{"tool a.json -- -o x", "tool a.json -- -o x"},
		{"tool a.json --unknown b.json", "tool --unknown a.json b.json"},
		{"tool a.json -o", "tool -o a.json"}, // the missing value is cli's error to report
	} {
		got := OptionsFirst(flags, strings.Fields(tc.in))
		if want := strings.Fields(tc.want); !slices.Equal(got, want) {
			t.Errorf("OptionsFirst(%q) = %q, want %q", tc.in, got, want)
		}
	}
}
