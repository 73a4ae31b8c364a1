package tokenize

import (
	"strings"
	"testing"
)

func TestForModel(t *testing.T) {
	t.Parallel()
	empty := t.TempDir() // a directory with no tokenizer in it
	for _, tc := range []struct {
		model string
		named bool
		warn  string // "" for none
	}{
		{"llama", false, ""},
		{"llama", true, "llama: no such directory here"},
		{"org/llama", false, "org/llama: no such directory here"},
		{empty, false, empty + ": "},
	} {
		spec, warning := ForModel("--model", tc.model, "o200k_base", tc.named)
		if spec != "o200k_base" || (tc.warn == "") != (warning == "") || !strings.Contains(warning, tc.warn) {
			t.Errorf("ForModel(%q, named %v) = %q, %q; want o200k_base and a warning with %q", tc.model, tc.named, spec, warning, tc.warn)
		}
	}
}
