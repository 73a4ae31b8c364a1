package iox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
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

// TestFlushEndsFrames checks what a kill leaves of a compressed output:
// everything before the last frame-ending Flush decodes with the standard
// decoders, and frames end at most every FrameInterval.
func TestFlushEndsFrames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"x.jsonl.gz", "x.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), name)
			out, err := Create(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			clock := time.Unix(1000, 0)
			out.now = func() time.Time { return clock }
			// decoded is what a reader gets from the file as it is now,
			// as if the process had been killed.
			written := ""
			decoded := func() (string, error) {
				t.Helper()
				in, err := Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				b, err := io.ReadAll(in) // a cut last frame ends in an error
				return string(b), err
			}
			step := func(text string, advance time.Duration, want string) {
				t.Helper()
				clock = clock.Add(advance)
				io.WriteString(out, text)
				written += text
				if err := out.Flush(); err != nil {
					t.Fatal(err)
				}
				got, err := decoded()
				if got != want {
					t.Errorf("after writing %q at +%v: file decodes to %q, want %q", text, advance, got, want)
				}
				if want == written && err != nil {
					t.Errorf("after writing %q: every frame should be complete, got %v", text, err)
				}
			}
			step("a\n", 0, "a\n")                     // the first Flush ends a frame
			step("b\n", FrameInterval/2, "a\n")       // too soon for another frame
			step("c\n", FrameInterval/2, "a\nb\nc\n") // FrameInterval after the first
			step("", 5*FrameInterval, "a\nb\nc\n")    // nothing new: no empty frame
			step("d\n", 0, "a\nb\nc\nd\n")            // idle long enough: at once
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := decoded(); got != written || err != nil {
				t.Errorf("after Close: %q, %v", got, err)
			}
		})
	}
}

// TestCloseEmptyCompressed: a compressed output that got no data is still
// a valid (empty) file.
func TestCloseEmptyCompressed(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"e.gz", "e.zst"} {
		path := filepath.Join(t.TempDir(), name)
		out, err := Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		in, err := Open(path, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, err := io.ReadAll(in); err != nil || len(b) != 0 {
			t.Errorf("%s: %q, %v", name, b, err)
		}
		in.Close()
	}
}

// TestDecompressToCut checks that a compressed stream cut short reads up to
// the cut and then reports it, while Decompress keeps failing on it, and
// that whole and plain streams report no cut.
func TestDecompressToCut(t *testing.T) {
	t.Parallel()
	want := strings.Repeat("line of text\n", 3000)
	for _, suffix := range []string{".gz", ".zst"} {
		path := filepath.Join(t.TempDir(), "x"+suffix)
		out, err := Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(out, want[:len(want)/2])
		out.Flush()
		st, _ := os.Stat(path)
		half := st.Size() // everything up to here decodes
		io.WriteString(out, want[len(want)/2:])
		out.Close()
		data, _ := os.ReadFile(path)
		for _, tc := range []struct {
			cut     int64
			min     int // decoded bytes at least
			wantCut bool
		}{
			// Flush ends a gzip member or zstd frame: a cut right after it
			// leaves a whole stream.
			{1, 0, true}, {2, 0, true}, {8, 0, true}, {half, len(want) / 2, false},
			{half + 3, len(want) / 2, true}, {int64(len(data)) - 1, len(want) / 2, true}, {int64(len(data)), len(want), false},
		} {
			s, release, err := DecompressToCut(bytes.NewReader(data[:tc.cut]))
			if err != nil {
				t.Errorf("%s cut %d: %v", suffix, tc.cut, err)
				continue
			}
			got, err := io.ReadAll(s)
			release()
			cut := s.Cut()
			var ce *CutError
			if err != nil || len(got) < tc.min || !strings.HasPrefix(want, string(got)) || (cut != nil) != tc.wantCut ||
				(cut != nil && (!errors.As(cut, &ce) || ce.Decoded != int64(len(got)))) {
				t.Errorf("%s cut %d: read %d bytes (err %v, want ≥ %d), cut %v", suffix, tc.cut, len(got), err, tc.min, cut)
			}
			if tc.cut >= 4 && tc.wantCut {
				r, release, err := Decompress(bytes.NewReader(data[:tc.cut]))
				if err == nil {
					_, err = io.ReadAll(r)
					release()
				}
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%s cut %d: Decompress: %v, want unexpected EOF", suffix, tc.cut, err)
				}
			}
		}
	}
	s, _, err := DecompressToCut(strings.NewReader("plain\n"))
	if b, _ := io.ReadAll(s); err != nil || string(b) != "plain\n" || s.Cut() != nil {
		t.Errorf("plain: %q %v %v", b, err, s.Cut())
	}
}

// TestDecompressToCutPeeked: a Stream a caller decompressed to peek at
// it comes back from DecompressToCut as it is, so it is not decompressed
// twice and its cut is still reported (mtstats peeks at stdin before
// record.Files reads it).
func TestDecompressToCutPeeked(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, "first\nsecond\n")
	zw.Close()
	data := buf.Bytes()[:buf.Len()-4] // the trailer cut off
	peeked, release, err := DecompressToCut(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if line, err := peeked.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("peek: %q, %v", line, err)
	}
	s, again, err := DecompressToCut(peeked)
	if err != nil || s != peeked {
		t.Fatalf("got %p, %v; want the peeked stream %p back", s, err, peeked)
	}
	again()
	rest, err := io.ReadAll(s)
	var ce *CutError
	if err != nil || string(rest) != "second\n" || !errors.As(s.Cut(), &ce) || ce.Format != "gzip" {
		t.Errorf("rest %q (%v), cut %v; want second and a gzip cut", rest, err, s.Cut())
	}
}

func TestCheckDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string // want "": no error
	}{
		{"", ""}, {"-", ""}, {filepath.Join(dir, "out.jsonl"), ""},
		{filepath.Join(dir, "no", "out.jsonl"), "--records " + filepath.Join(dir, "no", "out.jsonl") + ": "},
		{filepath.Join(file, "out.jsonl"), file + " is not a directory"},
	} {
		err := CheckDir("--records", tc.path)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckDir(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
