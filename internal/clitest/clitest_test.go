package clitest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that records failures; Fatalf ends the
// calling goroutine as the real one does.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.fatal = true
	runtime.Goexit()
}

// runGolden runs golden against a recorder in its own goroutine.
func runGolden(path string, got []byte, update bool) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		golden(r, path, got, update)
	}()
	<-done
	return r
}

func TestGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.stdout")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		path      string
		got       string
		errs      int
		fatal     bool
		wantInErr []string
	}{
		{"equal", path, "a\nb\nc\n", 0, false, nil},
		{"changed line", path, "a\nB\nc\n", 1, false, []string{path + " differs", "--- " + path + "\n+++ got\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}},
		{"missing newline", path, "a\nb\nc", 1, false, []string{"-c\n+c\n\\ No newline at end of file\n"}},
		{"empty", path, "", 1, false, []string{"@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"}},
		{"missing file", filepath.Join(dir, "nope"), "x", 1, true, []string{"go test -update creates it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runGolden(tc.path, []byte(tc.got), false)
			if len(r.errs) != tc.errs || r.fatal != tc.fatal {
				t.Fatalf("errors %q (fatal %v), want %d (fatal %v)", r.errs, r.fatal, tc.errs, tc.fatal)
			}
			for _, want := range tc.wantInErr {
				if !strings.Contains(r.errs[0], want) {
					t.Errorf("error %q does not contain %q", r.errs[0], want)
				}
			}
		})
	}
}

func TestGoldenUpdate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "testdata", "new.golden")
	for _, content := range []string{"first\n", "second"} {
		if r := runGolden(path, []byte(content), true); len(r.errs) != 0 {
			t.Fatalf("update: %q", r.errs)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("after update the file holds %q (%v), want %q", got, err, content)
		}
		if r := runGolden(path, []byte(content), false); len(r.errs) != 0 {
			t.Errorf("compare after update: %q", r.errs)
		}
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"insert at start", "b\nc\n", "a\nb\nc\n", "@@ -1,2 +1,3 @@\n+a\n b\n c\n"},
		{"delete at end", "a\nb\n", "a\n", "@@ -1,2 +1,1 @@\n a\n-b\n"},
		{"from empty", "", "x\n", "@@ -0,0 +1,1 @@\n+x\n"},
		{"two hunks", lines(1, 20), strings.Replace(strings.Replace(lines(1, 20), "2\n", "two\n", 1), "19\n", "nineteen\n", 1),
			"@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"},
		{"close changes merge", lines(1, 10), strings.Replace(strings.Replace(lines(1, 10), "3\n", "x\n", 1), "8\n", "y\n", 1),
			"@@ -1,10 +1,10 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n 7\n-8\n+y\n 9\n 10\n"},
		{"moved line", "a\nb\nc\nd\n", "a\nc\nd\nb\n", "@@ -1,4 +1,4 @@\n a\n-b\n c\n d\n+b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Diff("old", []byte(tc.old), "new", []byte(tc.new))
			want := "--- old\n+++ new\n" + tc.want
			if got != want {
				t.Errorf("Diff:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestDiffTruncated checks that a huge diff is cut.
func TestDiffTruncated(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	got := Diff("a", []byte(a.String()), "b", []byte(b.String()))
	if n := strings.Count(got, "\n"); n > maxDiffLines+4 || !strings.HasSuffix(got, "... (diff truncated)\n") {
		t.Errorf("%d lines, ends %q", n, got[len(got)-40:])
	}
}

func TestBuffer(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d\n", w)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	got := b.Bytes()
	if n := strings.Count(string(got), "\n"); n != 800 || len(got) != 1600 {
		t.Errorf("%d lines, %d bytes, want 800 and 1600", n, len(got))
	}
	got[0] = 'x'
	if b.String()[0] == 'x' {
		t.Error("Bytes returned the buffer itself, not a copy")
	}
}

// TestReplaceBlock: -update puts a tool's help into the one fenced block
// that begins with its first two lines, and nowhere else.
func TestReplaceBlock(t *testing.T) {
	t.Parallel()
	const help = "NAME:\n   mtx - does x\n\nOPTIONS:\n   --new  a new flag\n"
	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{"replaced",
			"# mtx\n\n```sh\nmtx --help\n```\n\n```\nNAME:\n   mtx - does x\n\nOPTIONS:\n   --old  gone\n```\nafter\n",
			"# mtx\n\n```sh\nmtx --help\n```\n\n```\n" + help + "```\nafter\n", ""},
		{"another tool's block untouched",
			"```\nNAME:\n   mty - does y\n```\n```\nNAME:\n   mtx - does x\n```\n",
			"```\nNAME:\n   mty - does y\n```\n```\n" + help + "```\n", ""},
		{"no block", "```\nNAME:\n   mty - does y\n```\n", "", "0 fenced blocks"},
		{"two blocks", "```\nNAME:\n   mtx - does x\n```\n```\nNAME:\n   mtx - does x\n```\n", "", "2 fenced blocks"},
		{"not closed", "```\nNAME:\n   mtx - does x\n", "", "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := replaceBlock([]byte(tc.doc), []byte(help))
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tc.want:
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
