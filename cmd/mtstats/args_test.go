package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

// TestOptionsAfterFiles: options after the record files work as before
// them, and a usage error anywhere exits 2 before a report or a side
// output (--html) is written.
func TestOptionsAfterFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stats := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"mtstats"}, args...))
		return code, out.String(), errb.String()
	}
	const base = "testdata/base.jsonl"
	_, want, _ := stats("-f", "json", "--by", "turn", base)
	if !strings.HasPrefix(want, "{") {
		t.Fatalf("reference run wrote %q", want)
	}
	for i, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"value options after the file", []string{base, "-f", "json", "--by", "turn"}, 0, want},
		{"between files", []string{base, "-f", "json", "--by=turn", "--", base}, 0, ""},
		{"unknown option after the file", []string{base, "--html", "HTML", "--bogus"}, 2, ""},
		{"missing value after the file", []string{base, "--html", "HTML", "-f"}, 2, ""},
		{"bad value after the file", []string{base, "--html", "HTML", "-f", "yaml"}, 2, ""},
	} {
		html := filepath.Join(dir, strings.Repeat("r", i+1)+".html")
		code, stdout, stderr := stats(clitest.Subst(tc.args, "HTML", html)...)
		if code != tc.code || (tc.stdout != "" || code != 0) && stdout != tc.stdout {
			t.Errorf("%s: exit %d, stdout %q; want %d, %q\nstderr: %s", tc.name, code, stdout, tc.code, tc.stdout, stderr)
		}
		if code != 0 && clitest.Lines(html) >= 0 {
			t.Errorf("%s: --html written despite the usage error", tc.name)
		}
	}
}
