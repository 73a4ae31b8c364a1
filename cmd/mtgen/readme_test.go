package main

import (
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// TestReadmeHelp keeps the --help output (testdata/help.stdout, checked
// against the binary by TestGolden) in README.md and docs/mtgen.md current.
func TestReadmeHelp(t *testing.T) {
	t.Parallel()
	clitest.FileInDoc(t, "../../README.md", "testdata/help.stdout")
	clitest.FileInDoc(t, "../../docs/mtgen.md", "testdata/help.stdout")
}
