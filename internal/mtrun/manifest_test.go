package mtrun

import (
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/manifest"
)

// TestArgRedactions: the manifest's command line shows --metrics-url
// without its user name and password.
func TestArgRedactions(t *testing.T) {
	t.Parallel()
	args := manifest.RedactArgs([]string{"mtrun", "--metrics-url", "http://u:pw-secret@h/metrics", "--metrics-url=http://v:pw-secret@h2/m", "x.jsonl"}, argRedactions)
	if want := "mtrun --metrics-url http://h/metrics --metrics-url=http://h2/m x.jsonl"; strings.Join(args, " ") != want {
		t.Errorf("redactArgs: %q, want %q", args, want)
	}
}
