package main

import (
	"testing"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/mtstats"
)

// TestFlagTable keeps testdata/flags.tsv, the table of mtstats's flags that
// cliflag's TestVocabulary compares with the other tools', current, and
// checks the help conventions of each flag.
func TestFlagTable(t *testing.T) {
	t.Parallel()
	flags := flags(&mtstats.Options{})
	for _, f := range flags {
		cliflag.CheckHelp(t, f)
	}
	clitest.Golden(t, "testdata/flags.tsv", cliflag.Table(flags))
}
