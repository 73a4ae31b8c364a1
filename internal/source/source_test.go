package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/jsonl"
)

const sharegptFile = "../convert/testdata/real/fastchat_dummy_conversation.json"

// readAll reads every session of in and fails the test on an error.
func readAll(t *testing.T, in Source) []conv.Conversation {
	t.Helper()
	var out []conv.Conversation
	for {
		c, ok := in.Next()
		if !ok {
			break
		}
		out = append(out, c)
	}
	if err := in.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// convertFile converts path as mtconvert does by default, the reference
// for the dataset formats.
// display is the input's name in ids made from file:line.
func convertFile(t *testing.T, path, display string, from convert.Schema) []conv.Conversation {
	t.Helper()
	var got []conv.Conversation
	opts := convert.Options{Inputs: []string{path}, From: from, Dedupe: true,
		Open: func(name string) (io.ReadCloser, string, error) {
			f, err := os.Open(name)
			return f, display, err
		}}
	if _, err := convert.Run(context.Background(), opts, writerFunc(func(c *conv.Conversation) error {
		got = append(got, *c)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	return got
}

// readConvFile reads a conversation file with conv.Reader, the reference
// for the conversation formats.
func readConvFile(t *testing.T, path string) []conv.Conversation {
	t.Helper()
	out, err := conv.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenEveryFormat opens each format's file by path, detected and
// named, and on stdin ("-"): the sessions equal those of the package the
// format is built on, and the digest is the file's SHA-256.
func TestOpenEveryFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, path string
		// want reads the reference sessions; display is the input's name.
		want func(t *testing.T, display string) []conv.Conversation // nil: check the count only
		n    int
	}{
		{"conversations", "testdata/conversations.jsonl", func(t *testing.T, _ string) []conv.Conversation {
			return readConvFile(t, "testdata/conversations.jsonl")
		}, 3},
		{"vllm", "testdata/vllm.json", func(t *testing.T, _ string) []conv.Conversation { return readConvFile(t, "testdata/vllm.json") }, 2},
		{"openai", "testdata/openai.jsonl", func(t *testing.T, display string) []conv.Conversation {
			return convertFile(t, "testdata/openai.jsonl", display, convert.SchemaOpenAI)
		}, 2},
		{"sharegpt", sharegptFile, func(t *testing.T, display string) []conv.Conversation {
			return convertFile(t, sharegptFile, display, convert.SchemaShareGPT)
		}, 12},
		{"generate", "testdata/generate.json", nil, 4},
	} {
		data, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		wantDigest := hex.EncodeToString(sum[:])
		for _, how := range []struct{ name, path, format string }{
			{"detected", tc.path, ""}, {"named", tc.path, tc.format}, {"stdin", "-", ""}, {"stdin named", "-", tc.format},
		} {
			t.Run(tc.format+"/"+how.name, func(t *testing.T) {
				t.Parallel()
				in, err := Open(how.path, how.format, bytes.NewReader(data), Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				if in.Format.Name != tc.format {
					t.Errorf("format %q, want %q", in.Format.Name, tc.format)
				}
				got := readAll(t, in)
				if len(got) != tc.n || in.Sessions() != tc.n {
					t.Errorf("%d sessions (%d counted), want %d", len(got), in.Sessions(), tc.n)
				}
				if tc.want != nil {
					if diff := cmp.Diff(tc.want(t, in.Name), got); diff != "" {
						t.Errorf("sessions differ from the reference (-want +got):\n%s", diff)
					}
				}
				d, err := in.Digest()
				if err != nil || d != wantDigest {
					t.Errorf("digest %q, %v; want %q", d, err, wantDigest)
				}
			})
		}
	}
}

// TestGenerateSeed checks that Options.Seed replaces the config's seed
// only when SeedSet, and that the same seed gives the same sessions.
func TestGenerateSeed(t *testing.T) {
	t.Parallel()
	read := func(o Options) []conv.Conversation {
		in, err := Open("testdata/generate.json", "", nil, o)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		return readAll(t, in)
	}
	def, zeroUnset := read(Options{}), read(Options{Seed: 7})
	seeded, again := read(Options{Seed: 7, SeedSet: true}), read(Options{Seed: 7, SeedSet: true})
	if !cmp.Equal(def, zeroUnset) {
		t.Error("Seed without SeedSet changed the sessions")
	}
	if cmp.Equal(def, seeded) {
		t.Error("Seed 7 with SeedSet gave the config's sessions")
	}
	if !cmp.Equal(seeded, again) {
		t.Error("the same seed gave different sessions")
	}
}

// TestDigestDrainsInput: the digest covers the whole input even when the
// replay stopped reading early.
func TestDigestDrainsInput(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; b.Len() < 4<<20; i++ { // larger than every read buffer
		b.WriteString(`{"id":"c` + itoa(i) + `","messages":[{"role":"user","content":"q"}]}` + "\n")
	}
	data := []byte(b.String())
	in, err := Open("-", "", bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, ok := in.Next(); !ok {
		t.Fatal(in.Err())
	}
	sum := sha256.Sum256(data)
	if d, err := in.Digest(); err != nil || d != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %q, %v after one session; want the whole input's", d, err)
	}
}

// countingReader counts the bytes read from it (the converter reads on a
// goroutine of its own).
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestLazy checks that a session is read when asked for, not the whole
// input up front: after the first session of a large input, only a
// buffer's worth has been read.
func TestLazy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format string
		line   func(i int) string
	}{
		{"conversations", func(i int) string {
			return `{"id":"c` + strings.Repeat("x", i%7) + itoa(i) + `","messages":[{"role":"user","content":"question number ` + itoa(i) + `"}]}`
		}},
		{"sharegpt", func(i int) string {
			return `{"id":"s` + itoa(i) + `","conversations":[{"from":"human","value":"question number ` + itoa(i) + `"},{"from":"gpt","value":"answer"}]}`
		}},
		{"openai", func(i int) string {
			return `{"messages":[{"role":"user","content":"question number ` + itoa(i) + `"},{"role":"assistant","content":"answer"}]}`
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for i := 0; b.Len() < 8<<20; i++ {
				b.WriteString(tc.line(i) + "\n")
			}
			cr := &countingReader{r: strings.NewReader(b.String())}
			in, err := Open("-", "", cr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Format.Name != tc.format {
				t.Fatalf("detected %q", in.Format.Name)
			}
			for range 3 {
				if _, ok := in.Next(); !ok {
					t.Fatal(in.Err())
				}
			}
			if n := cr.n.Load(); n > 4<<20 {
				t.Errorf("read %d of %d bytes for 3 sessions", n, b.Len())
			}
		})
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// TestOpenErrors covers inputs that cannot be replayed: each error names
// the input (and the line when it is one record's fault) and is a bad
// input (exit 2 in mtrun), found by Open when it is in the first record.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, input, format string
		sentinel            error // nil: a located record error
		want                string
	}{
		{"empty", "", "", ErrEmpty, "stdin: no conversations: the input is empty"},
		{"white space", " \n\t\n", "", ErrEmpty, "stdin: no conversations"},
		{"empty named", "", "conversations", ErrEmpty, "stdin: no conversations (format conversations)"},
		{"not json", "hello world\n", "", ErrUnknownFormat, "stdin:1: invalid character"},
		{"unknown object", `{"a": 1}` + "\n", "", ErrUnknownFormat, "known formats: " + strings.Join(Names(), ", ") + ";"},
		{"bad first record", `{"id":"a","messages":[{"role":"bot","content":"x"}]}` + "\n", "", nil, `stdin:1: messages[0].role: "bot" is not system, user, assistant or tool`},
		{"bad first element", `[{"id":"a","messages":[]}]`, "", nil, "stdin:1: list element 1: messages: missing or empty"},
		{"sharegpt all malformed", `{"id":"a","conversations":[{"from":"human"}]}` + "\n", "", ErrEmpty, "stdin: no conversations (format sharegpt)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Open("-", tc.format, strings.NewReader(tc.input), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !IsBadInput(err) {
				t.Fatalf("error %v, want a bad input containing %q", err, tc.want)
			}
			var je *jsonl.Error
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) || tc.sentinel == nil && !errors.As(err, &je) {
				t.Errorf("error %v (%T) is not %v", err, err, tc.sentinel)
			}
		})
	}
	if _, err := Open("-", "nosuch", strings.NewReader("{}"), Options{}); err == nil || !strings.HasSuffix(err.Error(), `unknown input format "nosuch": want one of `+strings.Join(Names(), ", ")) {
		t.Errorf("unknown --input-format: %v", err)
	}
	if _, err := Open("testdata/no-such-file.jsonl", "", nil, Options{}); err == nil || !strings.Contains(err.Error(), "no-such-file.jsonl") || IsBadInput(err) {
		t.Errorf("missing file: %v", err)
	}
}

// TestBadLaterRecord: a bad record after the first ends the source with
// a located error (file:line: field: problem) after the good ones.
func TestBadLaterRecord(t *testing.T) {
	t.Parallel()
	input := `{"id":"a","messages":[{"role":"user","content":"x"}]}
{"id":"b","messages":[{"role":"user","content":"y"}]}
{"id":"a","messages":[{"role":"user","content":"z"}]}
`
	in, err := Open("-", "", strings.NewReader(input), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	n := 0
	for _, ok := in.Next(); ok; _, ok = in.Next() {
		n++
	}
	err = in.Err()
	if n != 2 || err == nil || err.Error() != `stdin:3: id: "a" already used by the conversation at line 1` || !IsBadInput(err) {
		t.Errorf("%d sessions, error %v", n, err)
	}
}

// TestDatasetWarnings: what the converter skips is reported on
// Options.Log, never dropped silently.
func TestDatasetWarnings(t *testing.T) {
	t.Parallel()
	input := `{"id":"a","conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a"}]}
{"id":"b","conversations":"not a list"}
{"id":"a","conversations":[{"from":"human","value":"q again"}]}
`
	var log strings.Builder
	in, err := Open("-", "", strings.NewReader(input), Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if got := readAll(t, in); len(got) != 1 {
		t.Errorf("%d sessions, want 1", len(got))
	}
	for _, want := range []string{"warning: skipped stdin:2: conversations: expected array", "converted from sharegpt: 1 conversations kept, 1 malformed records skipped, 1 conversations dropped (duplicate_id 1)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q lacks %q", log.String(), want)
		}
	}
}

// TestCloseStopsProducer: closing a converted or generated source early
// ends its producer; Next then reports the end.
func TestCloseStopsProducer(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"testdata/generate.json", sharegptFile} {
		in, err := Open(path, "", nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := in.Next(); !ok {
			t.Fatal(in.Err())
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if _, ok := in.Source.Next(); ok {
			t.Errorf("%s: Next after Close returned a session", path)
		}
	}
}

// TestRewind: the second pass yields what the first read, then the rest,
// in order.
func TestRewind(t *testing.T) {
	t.Parallel()
	var convs []conv.Conversation
	for i := range 5 {
		convs = append(convs, conv.Conversation{ID: itoa(i)})
	}
	for _, firstReads := range []int{0, 2, 5} {
		first, again := Rewind(Slice(convs))
		for range firstReads {
			first.Next()
		}
		if got := readAll(t, again()); !cmp.Equal(got, convs) {
			t.Errorf("after %d read: second pass %v", firstReads, got)
		}
	}
}

// TestCopy writes the sessions of several inputs in order, dropping a
// repeated id only with dedupe.
func TestCopy(t *testing.T) {
	t.Parallel()
	paths := []string{"testdata/conversations.jsonl", "testdata/vllm.json", "testdata/conversations.jsonl"}
	for _, dedupe := range []bool{true, false} {
		var got []string
		st, err := Copy(context.Background(), writerFunc(func(c *conv.Conversation) error {
			got = append(got, c.ID)
			return nil
		}), paths, "", nil, Options{}, dedupe)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"c1", "c2", "c3", "v1", "v2"}
		if !dedupe {
			want = append(want, "c1", "c2", "c3")
		}
		if !cmp.Equal(got, want) || st.Inputs != 3 || st.Written != len(want) || st.Duplicates != 8-len(want) {
			t.Errorf("dedupe %v: wrote %v, stats %+v", dedupe, got, st)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Copy(ctx, writerFunc(func(*conv.Conversation) error { return nil }), paths, "", nil, Options{}, true); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// TestCompressedInput: detection and the digest see the decompressed
// bytes.
func TestCompressedInput(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(sharegptFile)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/sharegpt.json.gz"
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Open(path, "", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got := readAll(t, in)
	sum := sha256.Sum256(data)
	d, err := in.Digest()
	if in.Format.Name != "sharegpt" || len(got) != 12 || err != nil || d != hex.EncodeToString(sum[:]) {
		t.Errorf("format %q, %d sessions, digest %q (%v)", in.Format.Name, len(got), d, err)
	}
}

// TestTimed: an input is timed when its first session carries
// timestamp_ms (a trace written out by mtconvert); a timed format is
// tested in cmd/mtrun (TestTimedInput).
func TestTimed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input string
		timed bool
	}{
		{"#tsv-sessions\na\tq\n", false},
		{`{"id":"a","messages":[{"role":"user","content":"q"}]}`, false},
		{`{"id":"a","messages":[{"role":"user","content":"q","timestamp_ms":12.5}],"history":"none"}`, true},
		{`{"id":"a","messages":[{"role":"user","content":"q"}]}` + "\n" + `{"id":"b","messages":[{"role":"user","content":"q","timestamp_ms":1}]}`, false},
	} {
		in, err := Open("-", "", strings.NewReader(tc.input), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if in.Timed() != tc.timed {
			t.Errorf("%s: Timed %v, want %v", tc.input, in.Timed(), tc.timed)
		}
		in.Close()
	}
}

// TestSchemas: the formats internal/convert reads itself say their record
// schema; mtconvert converts exactly these (the others are read by Open).
func TestSchemas(t *testing.T) {
	t.Parallel()
	want := map[string]convert.Schema{"sharegpt": convert.SchemaShareGPT, "openai": convert.SchemaOpenAI,
		"vllm": convert.SchemaVLLM, "conversations": convert.SchemaOpenAI}
	for _, f := range Formats() {
		if f.Schema != want[f.Name] {
			t.Errorf("%s: schema %q, want %q", f.Name, f.Schema, want[f.Name])
		}
	}
}
