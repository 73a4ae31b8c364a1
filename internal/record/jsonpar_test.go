package record

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// scanStep is what one Scan of a Decoder or Files yields.
type scanStep struct {
	Label, File string
	Err         string
	Truncated   bool
	Rec         *Record
}

// transcript scans to the end and records every step and the final error.
func transcript(scan func() bool, dec func() (Record, error), final func() error, where func() (string, string)) ([]scanStep, string) {
	var steps []scanStep
	for scan() {
		r, err := dec()
		s := scanStep{}
		if where != nil {
			s.Label, s.File = where()
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				s.Err = "not a *SyntaxError: "
			}
			s.Err += err.Error()
			s.Truncated = errors.Is(err, ErrTruncated)
		} else {
			s.Rec = &r
		}
		steps = append(steps, s)
	}
	err := final()
	if err == nil {
		return steps, ""
	}
	return steps, err.Error()
}

func filesTranscript(f *Files) ([]scanStep, string) {
	return transcript(f.Scan, func() (Record, error) { return *f.Record(), f.Err() }, f.Err,
		func() (string, string) { return f.Label(), f.File() })
}

func decoderTranscript(d Decoder) ([]scanStep, string) {
	return transcript(d.Scan, func() (Record, error) { return *d.Record(), d.Err() }, d.Err, nil)
}

// genJSONL returns records as JSONL with injected problems: malformed and
// invalid lines, blank and space-only lines, CRLF endings, lines far
// longer than a chunk and, sometimes, a cut-short last line.
func genJSONL(t testing.TB, seed uint64, n int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	recs := genRecords(seed, n)
	var b bytes.Buffer
	bad := []string{
		`{oops}`, `[1,2]`, `{}`, `{"run_id":"r"}`, `{"run_id":"r","start":"nope"}`, `{"run_id":7}`,
		`{"run_id":"r","start":"2026-01-01T00:00:00Z",`, `"`, `{"seq":1e400}`, "\xff\xfe",
		`{"run_id":"r","start":"2026-01-01T00:00:00Z","end":"2025-01-01T00:00:00Z"}`,
	}
	for i := range recs {
		switch rng.IntN(12) {
		case 0:
			b.WriteString(bad[rng.IntN(len(bad))] + "\n")
		case 1:
			b.WriteString(strings.Repeat(" ", rng.IntN(3)) + "\n")
		case 2:
			// A long line: a record with a big server_extra, or garbage.
			if rng.IntN(2) == 0 {
				recs[i].ServerExtra = strings.Repeat("x", 1000+rng.IntN(5000))
			} else {
				b.WriteString("{" + strings.Repeat("z", 3000+rng.IntN(3000)) + "\n")
			}
		}
		line := encodeJSONL(t, recs[i:i+1])
		if rng.IntN(5) == 0 {
			line = append(line[:len(line)-1], "\r\n"...)
		}
		b.Write(line)
	}
	out := b.Bytes()
	switch rng.IntN(5) {
	case 0: // cut inside the last line
		if i := bytes.LastIndexByte(out[:len(out)-1], '\n'); i >= 0 {
			out = out[:i+1+(len(out)-i-1)/2]
		}
	case 1: // cut inside the last line, with its newline
		if i := bytes.LastIndexByte(out[:len(out)-1], '\n'); i >= 0 {
			out = append(out[:i+1+(len(out)-i-1)/2], '\n')
		}
	case 2: // trailing blank lines
		out = append(out, "\n  \n"...)
	case 3: // no final newline
		out = out[:len(out)-1]
	}
	return out
}

// TestParallelMatchesSequential checks that Files gives the same records,
// problems, line numbers, labels and final error with parallel decoding
// as with the sequential decoder, whatever the chunk size.
func TestParallelMatchesSequential(t *testing.T) {
	t.Parallel()
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			js := genJSONL(t, seed, 40+int(seed)*25)
			gzd := gz(t, js)
			paths := []string{
				writeFile(t, "a.jsonl", js),
				"gz=" + writeFile(t, "a.jsonl.gz", gzd),
				writeFile(t, "a.jsonl.zst", zst(t, js)),
				writeFile(t, "empty.jsonl", nil),
				writeFile(t, "blank.jsonl", []byte("\n\r\n  \n")),
			}
			if seed%3 == 0 {
				// A corrupt gzip stream ends the input with a read error.
				paths = append(paths, writeFile(t, "cut.jsonl.gz", gzd[:len(gzd)*2/3]))
			}
			seq := &Files{Paths: paths, sequential: true}
			want, wantErr := filesTranscript(seq)
			if len(want) == 0 {
				t.Fatal("no lines read")
			}
			for _, chunk := range []int{1, 17, 300, 4096, 0} {
				par := &Files{Paths: paths, chunkSize: chunk}
				got, gotErr := filesTranscript(par)
				if d := diff(want, got); d != "" {
					t.Errorf("chunk %d: parallel differs (-sequential +parallel):\n%s", chunk, d)
				}
				if gotErr != wantErr {
					t.Errorf("chunk %d: final error %q, sequential %q", chunk, gotErr, wantErr)
				}
			}
		})
	}
}

// TestParallelErrors pins the located problems of the parallel decoder.
func TestParallelErrors(t *testing.T) {
	t.Parallel()
	good := string(encodeJSONL(t, genRecords(5, 1)))
	for _, tc := range []struct {
		name, in string
		want     []string // problems in order, as prefixes; "" is a record
	}{
		{"blank lines", "\n\n" + good + "\r\n  \n" + good, []string{"", ""}},
		{"bad middle", good + "{oops}\n" + good, []string{"", "f:2: invalid JSON at byte ", ""}},
		{"truncated", good + good[:40], []string{"", "f:2: " + ErrTruncated.Error()}},
		{"truncated newline", good + good[:40] + "\n", []string{"", "f:2: " + ErrTruncated.Error()}},
		{"cut then blank", good + good[:40] + "\n\n", []string{"", "f:2: invalid JSON at byte 40: unexpected end"}},
		{"missing run", "\n{}\n", []string{"f:2: run_id: missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, chunk := range []int{1, 50, 0} {
				for _, workers := range []int{1, 2} {
					d := newChunkedJSONDecoder(strings.NewReader(tc.in), "f", chunk, workers, nil)
					steps, fatal := decoderTranscript(d)
					d.Close()
					var got []string
					for i, s := range steps {
						if i < len(tc.want) && tc.want[i] != "" && strings.HasPrefix(s.Err, tc.want[i]) {
							s.Err = tc.want[i]
						}
						got = append(got, s.Err)
					}
					if d := diff(tc.want, got); d != "" || fatal != "" {
						t.Errorf("chunk %d, %d workers: fatal %q, problems (-want +got):\n%s", chunk, workers, fatal, d)
					}
				}
			}
		})
	}
}

// failReader returns data, then err.
type failReader struct {
	data []byte
	err  error
}

func (r *failReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestParallelReadError(t *testing.T) {
	t.Parallel()
	good := string(encodeJSONL(t, genRecords(6, 1)))
	in := good + good + good[:30]
	boom := errors.New("boom")
	seq, seqErr := decoderTranscript(NewJSONDecoder(&failReader{[]byte(in), boom}, "f"))
	for _, chunk := range []int{1, 64, 0} {
		for _, workers := range []int{1, 2} {
			d := newChunkedJSONDecoder(&failReader{[]byte(in), boom}, "f", chunk, workers, nil)
			got, gotErr := decoderTranscript(d)
			d.Close()
			if diff := diff(seq, got); diff != "" || gotErr != seqErr || len(got) != 2 || gotErr != "f: boom" {
				t.Errorf("chunk %d, %d workers: error %q (sequential %q), lines (-seq +par):\n%s", chunk, workers, gotErr, seqErr, diff)
			}
		}
	}
}

// TestParallelClose checks that stopping early ends the goroutines, even
// with chunks decoded ahead and not consumed.
func TestParallelClose(t *testing.T) {
	t.Parallel()
	js := bytes.Repeat(encodeJSONL(t, genRecords(8, 50)), 40)
	for _, chunk := range []int{100, 0} {
		d := newChunkedJSONDecoder(bytes.NewReader(js), "f", chunk, 3, nil)
		if !d.Scan() || d.Err() != nil {
			t.Fatalf("first scan: %v", d.Err())
		}
		d.Close()
		d.Close()
	}
	p := writeFile(t, "a.jsonl", js)
	f := &Files{Paths: []string{p}, chunkSize: 200}
	for range 3 {
		if !f.Scan() {
			t.Fatal(f.Err())
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// FuzzParallelJSONL checks that the chunked decoder matches the sequential
// one on any input and chunk size. The fuzzer runs it inline, where its
// coverage is deterministic; with workers, whose select statements make
// coverage depend on scheduling, the fuzzer stalls minimizing inputs that
// only look new. The seed corpus runs both (and so does
// TestParallelMatchesSequential, with many generated inputs).
func FuzzParallelJSONL(f *testing.F) {
	// Small seeds: the fuzzer minimizes every input that finds new
	// coverage, for up to a minute when it is large.
	rec := `{"run_id":"r","seq":1,"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:01Z","itl_ns":[1,2]}`
	f.Add([]byte(rec+"\n\n"+rec+"\r\n{oops}\n  \n"+rec[:30]), uint16(7))
	f.Add([]byte(rec+"\n"+rec[:50]+"\n"), uint16(64))
	f.Add([]byte("\n\r\n{oops}\n{\"run_id\":"), uint16(3))
	f.Add([]byte(""), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		want, wantErr := decoderTranscript(NewJSONDecoder(bytes.NewReader(data), "f"))
		workers := []int{1}
		if !fuzzing() {
			workers = append(workers, 2)
		}
		for _, w := range workers {
			d := newChunkedJSONDecoder(bytes.NewReader(data), "f", int(chunk%512)+1, w, nil)
			got, gotErr := decoderTranscript(d)
			d.Close()
			if diff := diff(want, got); diff != "" || gotErr != wantErr {
				t.Errorf("%d workers: final error %q, sequential %q; (-sequential +chunked):\n%s", w, gotErr, wantErr, diff)
			}
		}
	})
}

// TestFilesPipePath checks that a pipe named as a file (a shell's
// <(...)) is not decoded ahead: a record comes as soon as its line does,
// before the writer closes the pipe.
func TestFilesPipePath(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	if _, err := w.Write(encodeJSONL(t, genRecords(9, 1))); err != nil {
		t.Fatal(err)
	}
	f := &Files{Paths: []string{path}}
	defer f.Close()
	defer w.Close() // first, so that a reader blocked in the pipe returns
	got := make(chan error, 1)
	go func() {
		if !f.Scan() {
			got <- fmt.Errorf("no record: %v", f.Err())
			return
		}
		got <- f.Err()
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the record did not come before the pipe was closed")
	}
}

// BenchmarkDecodeJSONL compares the sequential decoder with the chunked
// one, inline and on GOMAXPROCS workers, reporting records/s.
func BenchmarkDecodeJSONL(b *testing.B) {
	recs := make([]Record, 20000)
	for i := range recs {
		recs[i] = *benchRecord(i)
	}
	js := encodeJSONL(b, recs)
	for _, tc := range []struct {
		name string
		dec  func() Decoder
	}{
		{"sequential", func() Decoder { return NewJSONDecoder(bytes.NewReader(js), "b") }},
		{"inline", func() Decoder { return newChunkedJSONDecoder(bytes.NewReader(js), "b", 0, 1, nil) }},
		{"parallel", func() Decoder { return newParallelJSONDecoder(bytes.NewReader(js), "b", 0, nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(js)))
			n := 0
			for b.Loop() {
				d := tc.dec()
				for d.Scan() {
					if err := d.Err(); err != nil {
						b.Fatal(err)
					}
					n++
				}
				if pd, ok := d.(*parallelJSONDecoder); ok {
					pd.Close()
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
