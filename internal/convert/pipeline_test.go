package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert/sharegpttest"
)

// runResult is everything a run shows a user.
type runResult struct {
	out, log, summary, err string
}

// runTuned converts the named inputs with the pipeline tuned to workers
// and chunk size, writing JSONL (jsonl) or through conv.NewWriter.
func runTuned(t *testing.T, opts Options, files map[string]string, workers, chunk int, jsonl bool) runResult {
	t.Helper()
	opts.Open = memOpener(files)
	opts.workers, opts.chunkBytes = workers, chunk
	var out, log, summary bytes.Buffer
	opts.Log = &log
	var w Writer = conv.NewWriter(&out)
	if jsonl {
		w = JSONL(&out)
	}
	sum, err := Run(context.Background(), opts, w)
	res := runResult{out: out.String(), log: log.String()}
	if err != nil {
		res.err = err.Error()
	}
	if sum != nil {
		if werr := sum.Write(&summary); werr != nil {
			t.Fatal(werr)
		}
		res.summary = summary.String()
	}
	return res
}

// checkSame fails unless a run in many small chunks on several workers
// shows exactly what a run in one chunk per input on one worker shows.
func checkSame(t *testing.T, opts Options, files map[string]string) runResult {
	t.Helper()
	want := runTuned(t, opts, files, 1, 1<<30, true)
	for _, tc := range []struct {
		workers, chunk int
		jsonl          bool
	}{{4, 1, true}, {3, 700, true}, {2, 4096, false}, {1, 1, false}} {
		got := runTuned(t, opts, files, tc.workers, tc.chunk, tc.jsonl)
		if got != want {
			t.Errorf("%d workers, %d-byte chunks, jsonl %v differ from one chunk on one worker:\n%s", tc.workers, tc.chunk, tc.jsonl, diffResults(want, got))
		}
	}
	return want
}

func diffResults(want, got runResult) string {
	var b strings.Builder
	for _, f := range []struct{ name, want, got string }{
		{"output", want.out, got.out}, {"log", want.log, got.log},
		{"summary", want.summary, got.summary}, {"error", want.err, got.err},
	} {
		if f.want != f.got {
			fmt.Fprintf(&b, "%s: want %d bytes, got %d\n%.600s\n----\n%.600s\n", f.name, len(f.want), len(f.got), f.want, f.got)
		}
	}
	return b.String()
}

// messyJSONL mixes ShareGPT parts, OpenAI records, records with both keys
// (read as the input's format), records without id, malformed records and
// blank lines, so that format detection, re-decoding and warnings cross
// chunk boundaries.
func messyJSONL() string {
	var b strings.Builder
	for i := range 60 {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&b, "{\"id\":\"p%d_0\",\"conversations\":[{\"from\":\"human\",\"value\":\"q%d\"},{\"from\":\"gpt\",\"value\":\"a%d\"}]}\n", i, i, i)
			fmt.Fprintf(&b, "{\"id\":\"p%d_1\",\"conversations\":[{\"from\":\"human\",\"value\":\"more %d\"},{\"from\":\"gpt\",\"value\":\"ok\"}]}\n", i, i)
		case 1:
			fmt.Fprintf(&b, "{\"id\":\"o%d\",\"messages\":[{\"role\":\"user\",\"content\":\"openai %d\"}]}\n", i, i)
		case 2:
			fmt.Fprintf(&b, "{\"id\":\"b%d\",\"messages\":[{\"role\":\"user\",\"content\":\"m\"}],\"conversations\":[{\"from\":\"human\",\"value\":\"both %d\"}]}\n", i, i)
		case 3:
			fmt.Fprintf(&b, "{\"conversations\":[{\"from\":\"human\",\"value\":\"no id %d\"},{\"from\":\"gpt\",\"value\":\"x y z\"}]}\n", i)
		case 4:
			fmt.Fprintf(&b, "{\"id\":\"bad%d\",\"conversations\":[{\"from\":\"alien\",\"value\":\"?\"}]}\n", i)
		case 5:
			b.WriteString("{\"id\": \"broken\n\n")
		case 6:
			fmt.Fprintf(&b, "{\"id\":\"p%d_0\",\"conversations\":[{\"from\":\"human\",\"value\":\"dup\"}]}\n", i-6)
		case 7:
			fmt.Fprintf(&b, "{\"id\":\"g%d\",\"conversations\":[{\"from\":\"gpt\",\"value\":\"lead\"},{\"from\":\"human\",\"value\":\"\u4f60\u597d %d\"},{\"from\":\"human\",\"value\":\"again\"}]}\n", i, i)
		default:
			fmt.Fprintf(&b, "{\"id\":\"s%d\",\"conversations\":[{\"from\":\"human\",\"value\":\"%s\"},{\"from\":\"gpt\",\"value\":\"%s\"}]}\n", i, strings.Repeat("w ", i), strings.Repeat("v ", 2*i))
		}
	}
	return b.String()
}

func generated(t *testing.T, size int64, array bool) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := sharegpttest.Write(&b, size, 7, array); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPipelineSameInAnyChunking: the output, warnings, summary and error
// do not depend on the number of workers or the chunk size, for real
// excerpts, generated data and messy input, under every option that
// keeps state across records.
func TestPipelineSameInAnyChunking(t *testing.T) {
	t.Parallel()
	real := map[string]string{}
	for _, name := range []string{realFastChat, realGlaive, realOverlap, realParts, "testdata/sharegpt_quirks.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		real[name] = string(data)
	}
	inputs := []struct {
		name  string
		files map[string]string
	}{
		{"real", real},
		{"generated-array", map[string]string{"a.json": generated(t, 60<<10, true)}},
		{"generated-jsonl", map[string]string{"a.jsonl": generated(t, 60<<10, false)}},
		{"messy", map[string]string{"m.jsonl": messyJSONL(), "truncated.json": `[{"id":"t1","conversations":[{"from":"human","value":"x"}]}, {"id":"t2"`}},
	}
	optionSets := []struct {
		name string
		opts Options
	}{
		{"default", Options{Dedupe: true}},
		{"sample", Options{Dedupe: true, MaxItems: 7, Seed: 3}},
		{"filters", Options{Dedupe: true, MinTurns: 2, MaxTurns: 4, MinContentLen: 2, MaxContentLen: 3000, Alternation: AlternationDrop, DropSystem: true}},
		{"tokens", Options{Dedupe: true, Tokenizer: wordCounter{}, MaxWarnings: 3}},
		{"parts-all-tokens-sample", Options{Parts: PartsAll, Tokenizer: wordCounter{}, MaxItems: 5, Seed: 9}},
		{"parts-none-strict", Options{Parts: PartsNone, Strict: true}},
		{"forced-sharegpt", Options{From: SchemaShareGPT, Dedupe: true}},
	}
	for _, in := range inputs {
		for _, o := range optionSets {
			t.Run(in.name+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				opts := o.opts
				for name := range in.files {
					opts.Inputs = append(opts.Inputs, name)
				}
				slices.Sort(opts.Inputs)
				res := checkSame(t, opts, in.files)
				if res.out == "" && res.err == "" {
					t.Errorf("nothing written:\n%s", res.log)
				}
			})
		}
	}
}

// lateBadRecords returns a JSONL input of n good records with a malformed
// one at line bad (1-based).
func lateBadRecords(n, bad int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i == bad {
			b.WriteString("{\"id\":\"x\",\"conversations\":[{\"from\":\"human\",\"value\":42}]}\n")
			continue
		}
		fmt.Fprintf(&b, "{\"id\":\"r%d\",\"conversations\":[{\"from\":\"human\",\"value\":\"question %d\"},{\"from\":\"gpt\",\"value\":\"answer\"}]}\n", i, i)
	}
	return b.String()
}

// TestPipelineLateErrors: an error in a late chunk names its line and
// field, and the output holds exactly what a run in one chunk on one
// worker wrote before it: nothing from after the error. (As before the
// pipeline, the conversation read last before an error, still held for
// part merging, is not written.)
func TestPipelineLateErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    Options
		files   map[string]string
		err     string
		written int
	}{
		{"strict bad record", Options{Inputs: []string{"in.jsonl"}, Strict: true, Parts: PartsNone},
			map[string]string{"in.jsonl": lateBadRecords(500, 431)},
			"in.jsonl:431: conversations[0].value: expected string or array of content parts, got JSON number", 429},
		{"strict broken array", Options{Inputs: []string{"in.json"}, Strict: true, Parts: PartsNone},
			map[string]string{"in.json": "[\n" + strings.ReplaceAll(strings.TrimSuffix(lateBadRecords(300, 0), "\n"), "\n", ",\n") + ",\n{\"id\": \"cut"},
			"in.json:302: unexpected end of input inside the JSON array (truncated file?)", 299},
		{"bad second input", Options{Inputs: []string{"a.jsonl", "missing.jsonl"}, Parts: PartsNone},
			map[string]string{"a.jsonl": lateBadRecords(200, 0)},
			"open missing.jsonl: no such file or directory", 199},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := checkSame(t, tc.opts, tc.files)
			if res.err != tc.err {
				t.Errorf("error %q, want %q", res.err, tc.err)
			}
			if n := strings.Count(res.out, "\n"); n != tc.written {
				t.Errorf("wrote %d conversations before the error, want %d", n, tc.written)
			}
		})
	}
}

// failingReader returns data, then err.
type failingReader struct {
	data *strings.Reader
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.data.Len() == 0 {
		return 0, f.err
	}
	return f.data.Read(p)
}

// TestPipelineReadError: a read error late in an input ends the run with
// that error after what came before it is written.
func TestPipelineReadError(t *testing.T) {
	t.Parallel()
	errDisk := errors.New("disk on fire")
	in := lateBadRecords(400, 0)
	cut := strings.Index(in, `"r390"`) - 2 // inside record 389
	open := func(string) (io.ReadCloser, string, error) {
		return io.NopCloser(&failingReader{strings.NewReader(in[:cut]), errDisk}), "in.jsonl", nil
	}
	for _, workers := range []int{1, 3} {
		var out bytes.Buffer
		_, err := Run(context.Background(), Options{Inputs: []string{"x"}, Open: open, Parts: PartsNone, workers: workers, chunkBytes: 100}, JSONL(&out))
		if !errors.Is(err, errDisk) {
			t.Fatalf("%d workers: error %v, want %v", workers, err, errDisk)
		}
		if n := strings.Count(out.String(), "\n"); n != 388 {
			t.Errorf("%d workers: wrote %d conversations, want the 388 before the error", workers, n)
		}
	}
}

// failingWriter fails after n writes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

// convFailer fails at the nth conversation.
type convFailer struct{ n int }

func (f *convFailer) Write(*conv.Conversation) error {
	if f.n == 0 {
		return errors.New("disk full")
	}
	f.n--
	return nil
}

// TestPipelineWriteError: a write error ends the run with "write: ..."
// whatever the writer, without waiting for the rest of the input.
func TestPipelineWriteError(t *testing.T) {
	t.Parallel()
	files := map[string]string{"in.jsonl": lateBadRecords(2000, 0)}
	for _, w := range []Writer{JSONL(&failingWriter{n: 3}), &convFailer{n: 100}} {
		_, err := Run(context.Background(), Options{Inputs: []string{"in.jsonl"}, Open: memOpener(files), workers: 2, chunkBytes: 512, Tokenizer: wordCounter{}}, w)
		if err == nil || err.Error() != "write: disk full" {
			t.Errorf("%T: error %v, want write: disk full", w, err)
		}
	}
}

// TestPipelineCancel: a cancelled context ends the run with its error.
func TestPipelineCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	files := map[string]string{"in.jsonl": lateBadRecords(2000, 0)}
	_, err := Run(ctx, Options{Inputs: []string{"in.jsonl"}, Open: memOpener(files), workers: 2, chunkBytes: 512}, JSONL(io.Discard))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestPipelineFormatOfFirstRecord: the first well-formed record of an
// input fixes its format, also for records that decoders in other chunks
// read before it was known: a record with both keys is read in that
// format, and one with only the other key is malformed.
func TestPipelineFormatOfFirstRecord(t *testing.T) {
	t.Parallel()
	sg := `{"id":"s%d","conversations":[{"from":"human","value":"sharegpt %d"}]}` + "\n"
	oa := `{"id":"o%d","messages":[{"role":"user","content":"openai %d"}]}` + "\n"
	both := `{"id":"b%d","messages":[{"role":"user","content":"openai %d"}],"conversations":[{"from":"human","value":"sharegpt %d"}]}` + "\n"
	for _, tc := range []struct {
		name, in string
		want     []string
		warnings []string
	}{
		{"sharegpt first", fmt.Sprintf(sg+oa+both, 1, 1, 2, 2, 3, 3, 3),
			[]string{"s1: u:sharegpt 1", "b3: u:sharegpt 3"},
			[]string{"warning: skipped in.jsonl:2: conversations: missing (input read as sharegpt)"}},
		{"openai first", fmt.Sprintf(oa+sg+both, 1, 1, 2, 2, 3, 3, 3),
			[]string{"o1: u:openai 1", "b3: u:openai 3"},
			[]string{"warning: skipped in.jsonl:2: messages: missing (input read as openai)"}},
		{"malformed first", "{}\n" + fmt.Sprintf(both+sg, 1, 1, 1, 2, 2),
			[]string{"b1: u:sharegpt 1", "s2: u:sharegpt 2"},
			[]string{`warning: skipped in.jsonl:1: conversations: missing (no "conversations" or "messages" key)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, workers := range []int{1, 3} {
				var out, log bytes.Buffer
				opts := Options{Inputs: []string{"in.jsonl"}, Open: memOpener(map[string]string{"in.jsonl": tc.in}), Log: &log, workers: workers, chunkBytes: 1}
				if _, err := Run(context.Background(), opts, JSONL(&out)); err != nil {
					t.Fatal(err)
				}
				var got []string
				r := conv.NewReader(&out, "out")
				for r.Scan() {
					got = append(got, shape(r.Conversation()))
				}
				if !slices.Equal(got, tc.want) || !slices.Equal(strings.Split(strings.TrimSpace(log.String()), "\n"), tc.warnings) {
					t.Errorf("%d workers: wrote %q, warned %q; want %q, %q", workers, got, log.String(), tc.want, tc.warnings)
				}
			}
		})
	}
}
