package main

import (
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// TestReadmeHelp keeps the --help output (testdata/help.stdout, checked
// against the binary by TestGolden) in README.md current.
func TestReadmeHelp(t *testing.T) {
	t.Parallel()
	clitest.FileInDoc(t, "../../README.md", "testdata/help.stdout")
}
