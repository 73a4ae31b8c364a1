// Package clitest helps test the mtkit commands: a goroutine-safe output
// buffer and golden-file comparison.
//
// Importing it registers the -update flag: `go test ./cmd/mtrun -update`
// rewrites the golden files of that package with the current output, and
// the --help blocks of the docs the package's tests check (InDoc). A
// test package that imports clitest must not define its own update flag.
package clitest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
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
// the docs cannot go stale. With -update, InDoc puts want in instead: it
// replaces the one fenced code block that begins with want's first two
// lines ("NAME:" and the tool's name line, for help).
func InDoc(t testing.TB, path string, what string, want []byte) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("doc: %v", err)
	}
	if bytes.Contains(doc, want) {
		return
	}
	if !*update {
		t.Errorf("%s does not contain the current %s (go test -update puts it in):\n%s", path, what, want)
		return
	}
	// go test -update ./... runs the packages at once, and several
	// rewrite README.md: one at a time, each from the file as it is.
	unlock, err := lockDoc(path)
	if err != nil {
		t.Fatalf("doc: %v", err)
	}
	defer unlock()
	if doc, err = os.ReadFile(path); err != nil {
		t.Fatalf("doc: %v", err)
	}
	doc, err = replaceBlock(doc, want)
	if err != nil {
		t.Fatalf("doc %s: %s: %v", path, what, err)
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatalf("doc: %v", err)
	}
}

// lockDoc takes a lock on the document at path, between processes: a
// directory next to it that only one can create.
func lockDoc(path string) (unlock func(), err error) {
	lock := path + ".update-lock"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		err := os.Mkdir(lock, 0o755)
		if err == nil {
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) || time.Now().After(deadline) {
			return nil, fmt.Errorf("locking %s: %w (remove %s if no test is running)", path, err, lock)
		}
	}
}

// replaceBlock returns doc with the content of the one fenced code block
// (a "```" line, the content, a "```" line) whose content begins with the
// first two lines of want replaced by want.
func replaceBlock(doc, want []byte) ([]byte, error) {
	key, ok := firstLines(want, 2)
	if !ok {
		return nil, errors.New("the text has no two lines to find its block by")
	}
	open := append([]byte("```\n"), key...)
	var at []int
	for i := 0; ; {
		j := bytes.Index(doc[i:], open)
		if j < 0 {
			break
		}
		if i+j == 0 || doc[i+j-1] == '\n' {
			at = append(at, i+j)
		}
		i += j + len(open)
	}
	if len(at) != 1 {
		return nil, fmt.Errorf("%d fenced blocks begin with %q, want 1", len(at), key)
	}
	start := at[0] + len("```\n")
	n := bytes.Index(doc[start:], []byte("\n```"))
	if n < 0 {
		return nil, fmt.Errorf("the block beginning with %q is not closed", key)
	}
	end := start + n + 1 // after the content's last newline
	body := bytes.TrimSuffix(want, []byte("\n"))
	out := append(append(append([]byte{}, doc[:start]...), body...), '\n')
	return append(out, doc[end:]...), nil
}

// firstLines returns the first n lines of b, each with its newline.
func firstLines(b []byte, n int) ([]byte, bool) {
	end := 0
	for range n {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			return nil, false
		}
		end += i + 1
	}
	return b[:end], true
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
