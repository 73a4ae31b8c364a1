package iox

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateOpenRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		format Format
	}{
		{"out.jsonl", FormatPlain},
		{"out.jsonl.gz", FormatGzip},
		{"out.jsonl.zst", FormatZstd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tc.name)
			out, err := Create(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Repeat("line of text\n", 10000)
			io.WriteString(out, want[:len(want)/2])
			if err := out.Flush(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(out, want[len(want)/2:])
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			if got := Sniff(raw); got != tc.format {
				t.Errorf("Sniff = %v, want %v", got, tc.format)
			}
			in, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			got, err := io.ReadAll(in)
			if err != nil || string(got) != want {
				t.Errorf("read back %d bytes (err %v), want %d", len(got), err, len(want))
			}
		})
	}
}

func TestFlushMakesLinesVisible(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.zst")
	out, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	io.WriteString(out, "first\n")
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	// Without Close, the flushed prefix must decode.
	in, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(in, buf); err != nil || string(buf) != "first\n" {
		t.Errorf("got %q, %v", buf, err)
	}
}

func TestStdinStdout(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	out, err := Create("-", &stdout)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(out, "x\n")
	out.Close()
	if stdout.String() != "x\n" || out.Name != "stdout" {
		t.Errorf("stdout = %q name %q", stdout.String(), out.Name)
	}
	in, err := Open("-", strings.NewReader("PAR1abc"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(in)
	if string(b) != "PAR1abc" || in.Name != "stdin" {
		t.Errorf("stdin = %q name %q", b, in.Name)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("no error for a missing file")
	}
	if _, err := Open("-", bytes.NewReader([]byte{0x1f, 0x8b, 0, 0})); err == nil || !strings.Contains(err.Error(), "stdin: gzip") {
		t.Errorf("corrupt gzip: err = %v", err)
	}
}
