// Package clitest helps test the mtkit commands: a goroutine-safe output
// buffer and golden-file comparison.
//
// Importing it registers the -update flag: `go test ./cmd/mtrun -update`
// rewrites the golden files of that package with the current output. A
// test package that imports clitest must not define its own update flag.
package clitest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata with the current output")

// Buffer is a bytes.Buffer that is safe for concurrent use, for the
// output streams of a command that writes from several goroutines while
// the test reads them. The zero value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bytes returns a copy of what was written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// Golden compares got with the golden file at path (by convention
// testdata/NAME) byte for byte. A mismatch is reported with t.Errorf and a
// line diff from the golden file to got; a missing golden file stops the
// test. With -update, Golden writes got to path instead of comparing.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	golden(t, path, got, *update)
}

// golden is Golden with the -update flag as an argument.
func golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update accepts the output):\n%s", path, Diff(path, want, "got", got))
	}
}

// InDoc checks that the document at path (e.g. ../../README.md) contains
// want verbatim, such as a tool's current --help output, so examples in
// the docs cannot go stale.
func InDoc(t testing.TB, path string, what string, want []byte) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("doc: %v", err)
	}
	if !bytes.Contains(doc, want) {
		t.Errorf("%s does not contain the current %s; paste it in:\n%s", path, what, want)
	}
}

// FileInDoc is InDoc with the expected text read from a file, typically a
// golden file such as testdata/help.stdout.
func FileInDoc(t testing.TB, docPath, path string) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("doc: %v", err)
	}
	InDoc(t, docPath, path, want)
}

// Updating reports whether the test run was given -update, for tests that
// write their golden files themselves.
func Updating() bool { return *update }
