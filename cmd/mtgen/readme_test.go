package main

import (
	"os"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// TestReadmeHelp keeps the --help output in README.md and docs/mtgen.md current
// (testdata/help.stdout is checked against the binary by TestGolden).
func TestReadmeHelp(t *testing.T) {
	t.Parallel()
	help, err := os.ReadFile("testdata/help.stdout")
	if err != nil {
		t.Fatal(err)
	}
	clitest.InDoc(t, "../../README.md", "mtgen --help", help)
	clitest.InDoc(t, "../../docs/mtgen.md", "mtgen --help", help)
}
