package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// TestOptionsAfterFile: options after the conversations file work as
// before it, and a usage error anywhere exits 2 before a request is sent
// or --records is written.
func TestOptionsAfterFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "conv.jsonl")
	if err := os.WriteFile(in, []byte(convJSONL(2, 2, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := []string{"--sim", "--sim-config", "ttft=1ms,decode=1ms", "--tokenizer", "none", "-q"}
	for i, tc := range []struct {
		name    string
		args    []string
		code    int
		records int // lines in --records (-1: must not exist)
	}{
		{"options after the file", append([]string{in, "--records", "RECORDS"}, sim...), 0, 4},
		{"file after --", append(append([]string{"--records", "RECORDS"}, sim...), "--", in), 0, 4},
		{"unknown option after the file", append(append([]string{in, "--records", "RECORDS"}, sim...), "--bogus"), 2, -1},
		{"missing value after the file", append(append([]string{in, "--records", "RECORDS"}, sim...), "--clients"), 2, -1},
		{"bad value after the file", append(append([]string{in, "--records", "RECORDS"}, sim...), "--arrival", "burst"), 2, -1},
		{"a second file after the options", append(append([]string{in, "--records", "RECORDS"}, sim...), in), 2, -1},
	} {
		records := filepath.Join(dir, strings.Repeat("r", i+1)+".jsonl")
		got := runMtrun(t, "", nil, clitest.Subst(tc.args, "RECORDS", records)...)
		if got.code != tc.code || got.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want %d and nothing\nstderr: %s", tc.name, got.code, got.stdout, tc.code, got.stderr)
		}
		if n := clitest.Lines(records); n != tc.records {
			t.Errorf("%s: --records holds %d lines (-1: none), want %d", tc.name, n, tc.records)
		}
	}
}
