package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/mtkit/mtkit/internal/iox"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t *testing.T, data []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(data, nil)
}

func TestFiles(t *testing.T) {
	t.Parallel()
	recs := genRecords(11, 50)
	js := encodeJSONL(t, recs)
	pJSON := writeFile(t, "a.jsonl", js)
	pGz := writeFile(t, "a.jsonl.gz", gz(t, js))
	pZst := writeFile(t, "a.jsonl.zst", zst(t, js))
	pPq := writeFile(t, "a.parquet", encodeParquet(t, recs))
	bad := append(append([]byte{}, js...), []byte("{oops}\n")...)
	pBad := writeFile(t, "bad.jsonl", bad)

	fs := &Files{
		Paths: []string{pJSON, "gz=" + pGz, pZst, "pq=" + pPq, "-", pBad},
		Stdin: bytes.NewReader(zst(t, js)),
	}
	type seen struct{ label, file string }
	var got []Record
	var labels []seen
	var errs []string
	for fs.Scan() {
		if err := fs.Err(); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		got = append(got, *fs.Record())
		if len(labels) == 0 || labels[len(labels)-1] != (seen{fs.Label(), fs.File()}) {
			labels = append(labels, seen{fs.Label(), fs.File()})
		}
	}
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	var want []Record
	for range 6 {
		want = append(want, recs...)
	}
	if d := diffRecords(want, got); d != "" {
		t.Fatal(d)
	}
	wantLabels := []seen{{pJSON, pJSON}, {"gz", pGz}, {pZst, pZst}, {"pq", pPq}, {"stdin", "stdin"}, {pBad, pBad}}
	if len(labels) != len(wantLabels) {
		t.Fatalf("labels %v, want %v", labels, wantLabels)
	}
	for i := range labels {
		if labels[i] != wantLabels[i] {
			t.Errorf("input %d: %v, want %v", i, labels[i], wantLabels[i])
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], pBad+":51: invalid JSON") {
		t.Errorf("errors %q", errs)
	}
}

func TestFilesFatal(t *testing.T) {
	t.Parallel()
	pq := writeFile(t, "x.parquet", encodeParquet(t, genRecords(1, 3)))
	for _, tc := range []struct {
		name  string
		paths []string
		stdin io.Reader
		want  string
	}{
		{"missing", []string{"/nonexistent/x.jsonl"}, nil, "no such file"},
		{"parquet stdin", nil, mustOpen(t, pq), "stdin: Parquet cannot be read from a pipe"},
		{"no stdin", []string{"-"}, nil, "stdin: not available"},
		{"bad gzip", []string{writeFile(t, "b.gz", []byte{0x1f, 0x8b, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2})}, nil, "gzip: invalid header"},
		{"gzipped parquet", []string{writeFile(t, "x.parquet.gz", gz(t, encodeParquet(t, genRecords(1, 3))))}, nil, "compressed Parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := &Files{Paths: tc.paths, Stdin: tc.stdin}
			for fs.Scan() {
			}
			if err := fs.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func mustOpen(t *testing.T, p string) io.Reader {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(data)
}

// TestFilesLivePipe checks that records from stdin are delivered as they
// arrive, before the writer closes the pipe.
func TestFilesLivePipe(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	recs := genRecords(12, 3)
	js := encodeJSONL(t, recs)
	lines := bytes.SplitAfter(js, []byte("\n"))
	go func() {
		pw.Write(lines[0])
	}()
	fs := &Files{Stdin: pr}
	done := make(chan bool)
	go func() { done <- fs.Scan() }()
	select {
	case ok := <-done:
		if !ok || fs.Err() != nil || fs.Record().Seq != recs[0].Seq {
			t.Fatalf("scan: %v %v", ok, fs.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("first record not delivered before EOF")
	}
	go func() {
		pw.Write(bytes.Join(lines[1:], nil))
		pw.Close()
	}()
	n := 1
	for fs.Scan() {
		n++
	}
	if n != 3 || fs.Err() != nil {
		t.Errorf("%d records, err %v", n, fs.Err())
	}
}

func TestParseInput(t *testing.T) {
	t.Parallel()
	existing := writeFile(t, "a=b.jsonl", nil)
	for _, tc := range []struct{ in, label, path string }{
		{"x.jsonl", "x.jsonl", "x.jsonl"},
		{"base=x.jsonl", "base", "x.jsonl"},
		{"-", "-", "-"},
		{"new=-", "new", "-"},
		{"=x", "=x", "=x"},
		{existing, existing, existing},
	} {
		if got := ParseInput(tc.in); got.Label != tc.label || got.Path != tc.path {
			t.Errorf("ParseInput(%q) = %+v", tc.in, got)
		}
	}
}

// FuzzParquetDecoder checks that a damaged Parquet file gives errors, not
// panics, read whole and in blocks of a few rows with a column selection.
func FuzzParquetDecoder(f *testing.F) {
	data := encodeParquet(f, genRecords(31, 20))
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("PAR1PAR1"))
	recs := genRecords(32, 30)
	for i := range recs {
		if i%3 == 0 {
			recs[i].TTFTNs, recs[i].ITLNs, recs[i].FirstToken = nil, nil, nil
		} else {
			recs[i].Error, recs[i].VerifyMismatch = "boom", Ptr(i%2 == 0)
		}
	}
	f.Add(encodeParquetGroups(f, recs, 7))
	f.Add(claimRows(f, data, 1<<34))
	sel, err := NewColumns("turn", "ttft_ns", "phase", "error_class", "retried", "itl_ns", "error", "verify_mismatch")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, cols := range []*Columns{nil, sel} {
			dec, err := NewParquetDecoder(bytes.NewReader(in), int64(len(in)), "fuzz")
			if err != nil {
				return
			}
			dec.cols, dec.block = cols, 3
			for n := 0; dec.Scan() && n < 1000; n++ {
			}
			dec.Close()
		}
	})
}

// TestFilesCutCompressed reads gzip and zstd record files written the way
// mtrun writes them (a frame per flush) and then cut short at
// several offsets, as a kill leaves them, from a file, stdin, or stdin
// a caller decompressed to peek at it: every record flushed before the
// cut is read, the cut is reported once, and nothing is fatal.
func TestFilesCutCompressed(t *testing.T) {
	t.Parallel()
	recs := genRecords(12, 40)
	for _, suffix := range []string{".gz", ".zst"} {
		// One gzip member or zstd frame per record, as iox.Output ends a
		// frame at a flush.
		var data []byte
		var flushed []int64 // file size after each record
		for i := range recs {
			line := encodeJSONL(t, recs[i:i+1])
			if suffix == ".gz" {
				data = append(data, gz(t, line)...)
			} else {
				data = append(data, zst(t, line)...)
			}
			flushed = append(flushed, int64(len(data)))
		}
		n := int64(len(data))
		mid := (flushed[20] + flushed[21]) / 2
		for _, cut := range []int64{1, 3, 10, flushed[0] - 1, flushed[0], flushed[0] + 5, mid, flushed[39] - 1, flushed[39], n - 1, n} {
			for _, from := range []string{"file", "stdin", "peeked stdin"} {
				name := fmt.Sprintf("%s cut at %d of %d (%s)", suffix, cut, n, from)
				var fs *Files
				switch from {
				case "file":
					fs = &Files{Paths: []string{writeFile(t, "cut.jsonl"+suffix, data[:cut])}}
				case "stdin":
					fs = &Files{Stdin: bytes.NewReader(data[:cut])}
				default: // decompressed already, as mtstats passes it
					in, release, err := iox.DecompressToCut(bytes.NewReader(data[:cut]))
					if err != nil {
						t.Fatal(err)
					}
					defer release()
					fs = &Files{Stdin: in}
				}
				var got []Record
				cuts, lines := 0, 0
				for fs.Scan() {
					var ce *CutError
					switch err := fs.Err(); {
					case errors.As(err, &ce):
						cuts++
						if !strings.Contains(err.Error(), "stream cut short after") || !errors.Is(err, ErrTruncated) {
							t.Errorf("%s: cut reported as %v", name, err)
						}
					case errors.Is(err, ErrTruncated):
						lines++ // the record being written when cut
					case err != nil:
						t.Errorf("%s: %v", name, err)
					default:
						got = append(got, *fs.Record())
					}
				}
				if err := fs.Err(); err != nil {
					t.Errorf("%s: fatal %v", name, err)
				}
				want := 0 // records flushed before the cut
				for want < len(flushed) && flushed[want] <= cut {
					want++
				}
				if len(got) < want || len(got) > want+1 {
					t.Errorf("%s: read %d records, want the first %d", name, len(got), want)
				} else if d := diffRecords(recs[:len(got)], got); d != "" {
					t.Errorf("%s: %s", name, d)
				}
				// A flush ends a gzip member or zstd frame: cut there, the
				// stream is whole.
				whole := cut == n || slices.Contains(flushed, cut)
				if wantCuts := map[bool]int{true: 0, false: 1}[whole]; cuts != wantCuts || lines > 1 {
					t.Errorf("%s: %d cut reports (want %d), %d truncated lines", name, cuts, wantCuts, lines)
				}
			}
		}
	}
}

// TestFilesStdinBadLine: a bad record on stdin, read as it is or
// decompressed already by a caller that peeked at it (mtstats), is
// reported naming stdin, the line and the field, and the records around
// it are read.
func TestFilesStdinBadLine(t *testing.T) {
	t.Parallel()
	js := encodeJSONL(t, genRecords(2, 3))
	lines := bytes.SplitAfter(js, []byte("\n"))
	bad := slices.Concat(lines[0], []byte(`{"seq":"three"}`+"\n"), lines[1], lines[2])
	for _, peeked := range []bool{false, true} {
		var stdin io.Reader = bytes.NewReader(zst(t, bad))
		if peeked {
			in, release, err := iox.DecompressToCut(stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			stdin = in
		}
		fs := &Files{Stdin: stdin}
		var errs []string
		n := 0
		for fs.Scan() {
			if err := fs.Err(); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			n++
		}
		if err := fs.Err(); err != nil {
			t.Fatalf("peeked %v: fatal %v", peeked, err)
		}
		if n != 3 || len(errs) != 1 || !strings.HasPrefix(errs[0], "stdin:2: ") || !strings.Contains(errs[0], "seq") {
			t.Errorf("peeked %v: %d records, errors %q; want 3 and one naming stdin:2 and seq", peeked, n, errs)
		}
	}
}
