package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

// TestOptionsInAnyOrder: mtgen reads no files, so any positional argument
// (also one named like a flag after "--") and any option without its
// value are usage errors reported before anything is generated or -o is
// created; options may come in any order.
func TestOptionsInAnyOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gen := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runCLI(command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args...)
		return code, out.String(), errb.String()
	}
	small := []string{"--num-conversations", "2", "--turns", "2", "--input-tokens", "5", "--output-tokens", "2", "--seed", "4"}
	_, want, _ := gen(small...)
	if strings.Count(want, "\n") != 2 {
		t.Fatalf("reference run wrote %q", want)
	}
	for i, tc := range []struct {
		name string
		args []string
		code int
		file string // written to -o ("": must not exist)
	}{
		{"-o last", append(append([]string{}, small...), "-o", "OUT"), 0, want},
		{"-o first", append([]string{"-o", "OUT"}, small...), 0, want},
		{"a file after the options", append(append([]string{}, small...), "-o", "OUT", "extra.json"), 2, ""},
		{"a flag-like file after --", append(append([]string{}, small...), "-o", "OUT", "--", "--stats"), 2, ""},
		{"unknown option last", append(append([]string{"-o", "OUT"}, small...), "--bogus"), 2, ""},
		{"value missing last", append(append([]string{"-o", "OUT"}, small...), "--turns"), 2, ""},
		{"bad value last", append(append([]string{"-o", "OUT"}, small...), "--input-tokens", "gaussian:3"), 2, ""},
	} {
		out := filepath.Join(dir, strings.Repeat("x", i+1)+".jsonl")
		code, stdout, stderr := gen(clitest.Subst(tc.args, "OUT", out)...)
		if code != tc.code || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want %d and nothing\nstderr: %s", tc.name, code, stdout, tc.code, stderr)
		}
		got, err := os.ReadFile(out)
		switch {
		case tc.file == "" && err == nil:
			t.Errorf("%s: -o written: %q", tc.name, got)
		case tc.file != "" && string(got) != tc.file:
			t.Errorf("%s: -o = %q, %v; want %q", tc.name, got, err, tc.file)
		}
	}
}
