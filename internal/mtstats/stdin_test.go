package mtstats

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// compressions returns b plain, gzip- and zstd-compressed.
func compressions(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(b)
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	zw, err := zstd.NewWriter(&zs)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"plain": b, "gzip": gz.Bytes(), "zstd": zs.Bytes()}
}

// pipe returns the read end of an os.Pipe whose write end gets b, then
// is closed.
func pipe(t *testing.T, b []byte) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		w.Write(b)
		w.Close()
	}()
	return r
}

// Issue 23: a server-metrics series piped on stdin (`mtstats r.jsonl - <
// r.metrics.jsonl`) was read as records, as a named one was before.
// Through a real pipe, plain, gzip and zstd, it is the --metrics-file.
func TestSeriesOnStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	records := seriesRecord(t, dir)
	plain := realSeries(t)
	seriesFile := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(seriesFile, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(o Options) (map[string]any, string, error) {
		var out, errb bytes.Buffer
		o.Out, o.Err, o.Format = &out, &errb, "json"
		if err := Run(context.Background(), o); err != nil {
			return nil, errb.String(), err
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m, errb.String(), nil
	}
	want, _, err := run(Options{Inputs: []string{records}, Metrics: seriesFile})
	if err != nil {
		t.Fatal(err)
	}
	if get(want, "server") == nil {
		t.Fatal("--metrics-file: no server section")
	}
	for name, b := range compressions(t, plain) {
		for _, in := range [][]string{{records, "-"}, {"-", records}} {
			got, stderr, err := run(Options{Inputs: in, Stdin: pipe(t, b)})
			if err != nil || stderr != "" {
				t.Errorf("%s on stdin, inputs %q: %v, stderr %q", name, in, err, stderr)
				continue
			}
			if f := get(got, "server", "file"); f != "stdin" {
				t.Errorf("%s: server.file %v, want stdin", name, f)
			}
			got["server"].(map[string]any)["file"] = seriesFile
			if !jsonEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s on stdin, inputs %q: report differs from --metrics-file:\n%s\nwant\n%s", name, in, g, w)
			}
		}
	}
	// Alone, or with a --metrics-file of its own, a series on stdin is
	// a usage error naming stdin, as for a named file.
	for _, tc := range []struct {
		o       Options
		wantErr string
	}{
		{Options{}, "stdin is a server-metrics series: give the records file too"},
		{Options{Inputs: []string{"-"}}, "stdin is a server-metrics series: give the records file too"},
		{Options{Inputs: []string{records, "-"}, Metrics: seriesFile}, "stdin is a server-metrics series, and --metrics-file names"},
	} {
		tc.o.Stdin = pipe(t, plain)
		_, _, err := run(tc.o)
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ue) {
			t.Errorf("inputs %q: error %v, want usage error %q", tc.o.Inputs, err, tc.wantErr)
		}
	}
}

// Records on stdin are still records, plain and compressed, through a
// real pipe, with the same report as from the file.
func TestRecordsOnStdin(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 4, Run: "r", Convs: 20, MaxTurns: 4})
	data := statstest.JSONL(t, recs)
	want, _ := runJSON(t, Options{Inputs: []string{writeTemp(t, "r.jsonl", data)}})
	for name, b := range compressions(t, data) {
		got, stderr := runJSON(t, Options{Stdin: pipe(t, b)})
		if stderr != "" {
			t.Errorf("%s: stderr %q", name, stderr)
		}
		delete(got, "inputs")
		w := map[string]any{}
		for k, v := range want {
			w[k] = v
		}
		delete(w, "inputs")
		if !jsonEqual(got, w) {
			t.Errorf("%s records on stdin: report differs from the file's", name)
		}
	}
}

// peekStdin waits for stdin's first line and no more, and consumes
// nothing: a live pipe of records (mtrun ... | mtstats --every) is read
// as it comes. The writer here sends one line and waits for peekStdin to
// answer before it sends the rest and closes: peekStdin reading to the
// end would block forever.
func TestPeekStdinStreams(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 5, Run: "r", Convs: 3, MaxTurns: 2})
	data := statstest.JSONL(t, recs)
	i := bytes.IndexByte(data, '\n') + 1
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.Write(append([]byte("\n  \n"), data[:i]...)); err != nil {
		t.Fatal(err)
	}
	in, release, k, err := peekStdin(r)
	if err != nil || k != kindRecords {
		t.Fatalf("peekStdin: %v, kind %v", err, k)
	}
	defer release()
	go func() {
		w.Write(data[i:])
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte("\n  \n"), data...); !bytes.Equal(got, want) {
		t.Errorf("the stream after peekStdin lost bytes: %d of %d", len(got), len(want))
	}
}

// firstLine finds the first non-blank line, or none.
func TestFirstLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"\n\n", ""},
		{"a\nb\n", "a\n"},
		{" \n\t\nab\n", "ab\n"},
		{"\nlast", "last"},
		{strings.Repeat("x", 1<<17) + "\n", ""}, // longer than the buffer
	} {
		in, release, _, err := peekStdin(strings.NewReader(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(firstLine(in.Reader)); got != tc.want {
			t.Errorf("firstLine(%.20q) = %.20q, want %q", tc.in, got, tc.want)
		}
		release()
	}
}

// TestReleaseLater: a stdin peek given up on (interrupt) still has its
// decompressor released once the peek returns.
func TestReleaseLater(t *testing.T) {
	ch := make(chan peeked, 1)
	released := make(chan struct{})
	done := make(chan struct{})
	go func() {
		releaseLater(ch)
		close(done)
	}()
	ch <- peeked{release: func() { close(released) }}
	<-done
	select {
	case <-released:
	default:
		t.Fatal("the peek's release was not called")
	}
	ch <- peeked{err: io.EOF} // no release: nothing to call
	releaseLater(ch)
}
