package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSameButRetention(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, with, without string
		err                 string // "" = none
	}{
		{"same but retention", `{"summary":{"n":1},"cache_retention":{"basis":"ttft"}}`, `{"summary":{"n":1}}`, ""},
		{"no retention", `{"summary":{"n":1}}`, `{"summary":{"n":1}}`, "no cache_retention"},
		{"retention in both", `{"cache_retention":{}}`, `{"cache_retention":{}}`, "with --no-retention"},
		{"summaries differ", `{"summary":{"n":1},"cache_retention":{}}`, `{"summary":{"n":2}}`, "differ in more than cache_retention"},
		{"a section missing", `{"summary":{"n":1},"server":{},"cache_retention":{}}`, `{"summary":{"n":1}}`, "differ in more than cache_retention"},
		{"not JSON", `{"summary":`, `{}`, "unexpected end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			with, without := filepath.Join(dir, "with.json"), filepath.Join(dir, "without.json")
			for path, doc := range map[string]string{with: tc.with, without: tc.without} {
				if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := sameButRetention(with, without)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}
