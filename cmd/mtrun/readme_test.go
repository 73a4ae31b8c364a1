package main

import (
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// TestReadmeHelp keeps the --help output in README.md current (go test
// -update puts it in, as it rewrites testdata/help.stdout).
func TestReadmeHelp(t *testing.T) {
	t.Parallel()
	got := runMtrun(t, "", nil, "--help")
	if got.code != 0 {
		t.Fatalf("--help: exit %d, %s", got.code, got.stderr)
	}
	clitest.InDoc(t, "../../README.md", "mtrun --help", []byte(got.stdout))
}
