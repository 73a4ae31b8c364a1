package tokenize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestLoadCached checks that Load returns the same tokenizer for a spec and
// its aliases, also under concurrent calls.
func TestLoadCached(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	got := make([]Tokenizer, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := []string{"", "o200k_base", "o200k", "gpt-4o"}[i%4]
			tok, err := Load(spec)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = tok
		}()
	}
	wg.Wait()
	for i, tok := range got {
		if tok != got[0] {
			t.Fatalf("Load #%d returned a different tokenizer", i)
		}
	}
	if got[0].Name() != "o200k_base" {
		t.Errorf("Name = %q", got[0].Name())
	}
	cl, err := Load("gpt-4")
	if err != nil {
		t.Fatal(err)
	}
	if cl == got[0] || cl.Name() != "cl100k_base" {
		t.Errorf("gpt-4 gave %q", cl.Name())
	}
}

// TestLoadErrors checks the errors of bad specs.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"model\": [1,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "emptydir")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec     string
		want     string
		notFound bool
	}{
		{"x", `tokenizer "x": no such built-in encoding or file`, true},
		{"o300k_base", `tokenizer "o300k_base": no such built-in encoding or file`, true},
		{empty, "directory has no tokenizer.json", true},
		{bad, bad + ":2:12: model: want an object, got an array", false},
	} {
		_, err := Load(tc.spec)
		if err == nil {
			t.Errorf("Load(%q): no error", tc.spec)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %q, want it to contain %q", tc.spec, err, tc.want)
		}
		if errors.Is(err, ErrNotFound) != tc.notFound {
			t.Errorf("Load(%q): errors.Is(ErrNotFound) = %v", tc.spec, !tc.notFound)
		}
	}
}

// TestLoadDirectory checks that a model directory loads its tokenizer.json
// and that the file and the directory share nothing but the result.
func TestLoadDirectory(t *testing.T) {
	t.Parallel()
	p := fixturePath(t, "qwen3")
	byDir, err := Load(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	byFile, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := byDir.Encode("hello world"), byFile.Encode("hello world"); len(a) != 2 || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("dir %v, file %v", a, b)
	}
	if byFile.Name() != p {
		t.Errorf("Name = %q, want %q", byFile.Name(), p)
	}
}
