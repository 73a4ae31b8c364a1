package main

import (
	"bytes"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

// TestReadmeHelp keeps the --help output in README.md current (go test
// -update puts it in, as it rewrites testdata/help.stdout).
func TestReadmeHelp(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(command.Streams{In: &bytes.Buffer{}, Out: &out, Err: &errb}, []string{"mtstats", "--help"}); code != 0 {
		t.Fatalf("--help: exit %d, %s", code, errb.String())
	}
	clitest.InDoc(t, "../../README.md", "mtstats --help", out.Bytes())
}

// TestReadmeQuickStart keeps the example output in README.md that of
// mtstats on the records of a run of the quick start as printed
// (testdata/quickstart.jsonl.gz; go test -update puts it in).
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(command.Streams{In: &bytes.Buffer{}, Out: &out, Err: &errb}, []string{"mtstats", "testdata/quickstart.jsonl.gz"}); code != 0 {
		t.Fatalf("exit %d, %s", code, errb.String())
	}
	clitest.InDoc(t, "../../README.md", "quick-start output", out.Bytes())
}
