package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSibling(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	exe := filepath.Join(dir, "mtrun")
	t.Setenv("PATH", other)
	if _, err := Sibling("mtstats", exe); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "mtstats")) || !strings.Contains(err.Error(), "PATH") {
		t.Errorf("none: %v, want an error naming %s and PATH", err, filepath.Join(dir, "mtstats"))
	}
	onPath := filepath.Join(other, "mtstats")
	if err := os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Sibling("mtstats", exe); err != nil || got != onPath {
		t.Errorf("on PATH: %q, %v; want %q", got, err, onPath)
	}
	beside := filepath.Join(dir, "mtstats")
	if err := os.WriteFile(beside, []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := Sibling("mtstats", exe); got != onPath {
		t.Errorf("a file beside that is not executable: %q, want PATH's %q", got, onPath)
	}
	if err := os.Chmod(beside, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Sibling("mtstats", exe); err != nil || got != beside {
		t.Errorf("beside: %q, %v; want %q first", got, err, beside)
	}
}
