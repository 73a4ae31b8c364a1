package convert

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mtkit/mtkit/internal/convert/sharegpttest"
)

// BenchmarkConvert measures end-to-end conversion throughput (input MB/s)
// of generated ShareGPT-shaped data: 16 MB in memory always; the ~650 MB
// file of the full ShareGPT dump only with MTCONVERT_BENCH_BIG=1, written
// to a temporary directory.
func BenchmarkConvert(b *testing.B) {
	for _, tc := range []struct {
		name  string
		array bool
	}{{"sharegpt-array-16MB", true}, {"sharegpt-jsonl-16MB", false}} {
		var buf bytes.Buffer
		if _, err := sharegpttest.Write(&buf, 16<<20, 1, tc.array); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				benchRun(b, func(string) (io.ReadCloser, string, error) {
					return io.NopCloser(bytes.NewReader(data)), "bench", nil
				})
			}
		})
	}
	if os.Getenv("MTCONVERT_BENCH_BIG") == "" {
		return
	}
	path := filepath.Join(b.TempDir(), "sharegpt_650MB.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sharegpttest.Write(f, 650e6, 2, true); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.Run("sharegpt-array-650MB-file", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			benchRun(b, func(name string) (io.ReadCloser, string, error) {
				f, err := os.Open(name)
				return f, name, err
			}, path)
		}
	})
}

func benchRun(b *testing.B, open Opener, inputs ...string) {
	b.Helper()
	if len(inputs) == 0 {
		inputs = []string{"bench"}
	}
	sum, err := Run(context.Background(), Options{Inputs: inputs, Open: open, Dedupe: true}, JSONL(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	if sum.Written == 0 || sum.Malformed != 0 {
		b.Fatalf("written %d, malformed %d", sum.Written, sum.Malformed)
	}
}

// TestGenerateShareGPTFile writes the ShareGPT-shaped benchmark file
// (~650 MB, or $MTCONVERT_GEN_MB megabytes) to $MTCONVERT_GEN_FILE (for
// measuring the mtconvert binary itself, e.g. with /usr/bin/time -v); it
// is skipped when the variable is unset.
func TestGenerateShareGPTFile(t *testing.T) {
	path := os.Getenv("MTCONVERT_GEN_FILE")
	if path == "" {
		t.Skip("MTCONVERT_GEN_FILE not set")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(650e6)
	if mb, err := strconv.Atoi(os.Getenv("MTCONVERT_GEN_MB")); err == nil && mb > 0 {
		size = int64(mb) * 1e6
	}
	n, err := sharegpttest.Write(f, size, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d records to %s", n, path)
}
