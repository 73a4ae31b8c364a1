package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

// TestReadmeHelp keeps the --help output in README.md and
// docs/mtconvert.md current (go test -update puts it in, as it rewrites
// testdata/help.stdout).
func TestReadmeHelp(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"mtconvert", "--help"}, command.Streams{In: &bytes.Buffer{}, Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("--help: exit %d, %s", code, errb.String())
	}
	clitest.InDoc(t, "../../README.md", "mtconvert --help", out.Bytes())
	clitest.InDoc(t, "../../docs/mtconvert.md", "mtconvert --help", out.Bytes())
}
