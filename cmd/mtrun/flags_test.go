package main

import (
	"testing"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/mtrun"
)

// TestFlagTable keeps testdata/flags.tsv, the table of mtrun's flags that
// cliflag's TestVocabulary compares with the other tools', current, and
// checks the help conventions of each flag and that each is bound to a
// field.
func TestFlagTable(t *testing.T) {
	t.Parallel()
	flags := newApp(command.Streams{}, mtrun.Run).Flags
	for _, f := range flags {
		cliflag.CheckHelp(t, f)
	}
	clitest.Golden(t, "testdata/flags.tsv", cliflag.Table(flags))
	if names := cliflag.Unbound(flags); len(names) > 0 {
		t.Errorf("flags bound to no field of mtrun.Flags (they could only be read back by name): %q", names)
	}
}
