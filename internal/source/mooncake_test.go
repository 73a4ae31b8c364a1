package source

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/tokenize"
)

const mooncakeFixture = "testdata/traces/mooncake_conversation_head300.jsonl"

// headLines returns the first n lines of a file.
func headLines(t testing.TB, path string, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	sc := bufio.NewScanner(f)
	for i := 0; i < n && sc.Scan(); i++ {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// drain reads every session of the format named format from data.
func drain(t testing.TB, format string, data []byte, o Options) ([]conv.Conversation, error) {
	t.Helper()
	f, ok := Lookup(format)
	if !ok {
		t.Fatalf("format %q not registered", format)
	}
	s, err := f.Open(bytes.NewReader(data), "t.in", o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []conv.Conversation
	for {
		c, ok := s.Next()
		if !ok {
			break
		}
		out = append(out, c)
	}
	return out, s.Err()
}

// TestMooncake reads the first 40 requests of the real Mooncake trace:
// one session per request, in order, each user message exactly
// input_length tokens, timestamps relative to the first request, and
// max tokens from output_length.
func TestMooncake(t *testing.T) {
	data := headLines(t, mooncakeFixture, 40)
	convs, err := drain(t, "mooncake", data, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := tokenize.Load("")
	var want []mooncakeLine
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m mooncakeLine
		json.Unmarshal(l, &m)
		want = append(want, m)
	}
	if len(convs) != len(want) {
		t.Fatalf("%d sessions, want %d", len(convs), len(want))
	}
	for i, c := range convs {
		w := want[i]
		if err := c.Validate(); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if c.History != conv.HistoryNone || len(c.Messages) != 2 || c.Meta["line"] != i+1 {
			t.Fatalf("session %d: history %q, %d messages, meta %v", i, c.History, len(c.Messages), c.Meta)
		}
		u, a := c.Messages[0], c.Messages[1]
		if u.Tokens != *w.InputLength || tok.Count(u.Content) != *w.InputLength {
			t.Errorf("line %d: tokens %d, counted %d, want %d", i+1, u.Tokens, tok.Count(u.Content), *w.InputLength)
		}
		if *u.TimestampMs != *w.Timestamp-*want[0].Timestamp {
			t.Errorf("line %d: timestamp_ms %g, want %g", i+1, *u.TimestampMs, *w.Timestamp)
		}
		if a.Role != conv.RoleAssistant || a.OutputTokens != max(*w.OutputLength, 1) || a.Content != "" {
			t.Errorf("line %d: answer %+v", i+1, a)
		}
	}
	// The same input and seed give the same prompts; another seed others.
	again, _ := drain(t, "mooncake", data[:bytes.IndexByte(data, '\n')+1], Options{Seed: 1})
	other, _ := drain(t, "mooncake", data[:bytes.IndexByte(data, '\n')+1], Options{Seed: 2})
	if again[0].Messages[0].Content != convs[0].Messages[0].Content || other[0].Messages[0].Content == convs[0].Messages[0].Content {
		t.Error("prompts do not follow the seed")
	}
}

// TestTraceOrder checks that sessions come out by first timestamp (stable
// for ties) when the file is not in order, with timestamps relative to
// the earliest request.
func TestTraceOrder(t *testing.T) {
	in := `{"timestamp": 5000, "input_length": 3, "output_length": 2, "hash_ids": [1]}
{"timestamp": 1000, "input_length": 4, "output_length": 2, "hash_ids": [2]}
{"timestamp": 3000, "input_length": 5, "output_length": 2, "hash_ids": [3]}
{"timestamp": 1000, "input_length": 6, "output_length": 0, "hash_ids": [4]}
`
	convs, err := drain(t, "mooncake", []byte(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range convs {
		got = append(got, c.ID+"@"+jsonNum(*c.Messages[0].TimestampMs))
	}
	if want := "line-2@0 line-4@0 line-3@2000 line-1@4000"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	if convs[1].Messages[1].OutputTokens != 1 {
		t.Errorf("output_length 0 asks for %d tokens, want 1", convs[1].Messages[1].OutputTokens)
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// TestMooncakeErrors checks that bad input is reported as file:line:
// field: problem.
func TestMooncakeErrors(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}` + "\n"
	for _, tc := range []struct{ line, want string }{
		{`{"input_length": 1, "output_length": 1, "hash_ids": [0]}`, "t.in:2: timestamp: missing"},
		{`{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [0]}`, "t.in:2: timestamp: -1 is not a time"},
		// Issue 24: 10^18 ms overflowed the clock and was sent at t = 0.
		{`{"timestamp": 1e18, "input_length": 1, "output_length": 1, "hash_ids": [0]}`, "t.in:2: timestamp: 1e+18 is past the trace clock's range"},
		{`{"timestamp": 1, "output_length": 1, "hash_ids": [0]}`, "t.in:2: input_length: missing"},
		{`{"timestamp": 1, "input_length": 0, "output_length": 1, "hash_ids": []}`, "t.in:2: input_length: 0: a prompt needs at least one token"},
		{`{"timestamp": 1, "input_length": 1, "hash_ids": [0]}`, "t.in:2: output_length: missing"},
		{`{"timestamp": 1, "input_length": 1, "output_length": -2, "hash_ids": [0]}`, "t.in:2: output_length: -2 is negative"},
		{`{"timestamp": 1, "input_length": 1, "output_length": 1}`, "t.in:2: hash_ids: missing"},
		{`{"timestamp": 1, "input_length": 513, "output_length": 1, "hash_ids": [0]}`, "t.in:2: hash_ids: 1 blocks of 512 tokens do not hold input_length 513 (want 2 blocks)"},
		{`{"timestamp": 1, "input_length": 512, "output_length": 1, "hash_ids": [0, 1]}`, "t.in:2: hash_ids: 2 blocks of 512 tokens do not hold input_length 512 (want 1 blocks)"},
		{`{"timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [-3]}`, "t.in:2: hash_ids[0]: -3 is negative"},
		{`{"timestamp": "x", "input_length": 5, "output_length": 1, "hash_ids": [3]}`, "t.in:2: timestamp: expected float64, got JSON string"},
		{`{"timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [3.5]}`, "t.in:2: hash_ids: expected int64, got JSON number 3.5"},
		{`{"timestamp": 1,`, "t.in:2: invalid JSON"},
		{`[1]`, "t.in:2: request: not a JSON object"},
	} {
		_, err := drain(t, "mooncake", []byte(ok+tc.line+"\n"), Options{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.line, err, tc.want)
		}
	}
}

// TestTraceDetect checks each trace format's detection on its fixture's
// head, and that no other trace format claims it.
func TestTraceDetect(t *testing.T) {
	files := map[string]string{
		"mooncake": mooncakeFixture,
		"azure":    azureFixture,
		"bailian":  bailianFixture,
		"burstgpt": burstFixture,
	}
	for format, path := range files {
		head := headLines(t, path, 5)
		for other := range files {
			f, _ := Lookup(other)
			if got := f.Detect(path, head); got != (other == format) {
				t.Errorf("%s detects %s: %v", other, path, got)
			}
		}
		conversation := []byte(`{"id": "a", "messages": [{"role": "user", "content": "hi"}]}` + "\n")
		if f, _ := Lookup(format); f.Detect("c.jsonl", conversation) {
			t.Errorf("%s detects a conversation file", format)
		}
	}
}

// traceErrRE is the shape of every trace error: file:line: field: problem.
var traceErrRE = regexp.MustCompile(`^t\.in:\d+: [A-Za-z_ \[\]0-9]+: `)

// fuzzTrace opens data in format with small limits and drains it: no
// panic, and an error is file:line: field: problem.
func fuzzTrace(t *testing.T, format string, data []byte) {
	defer func(n int) { maxTraceTokens = n }(maxTraceTokens)
	maxTraceTokens = 2048
	_, err := drain(t, format, data, Options{})
	if err != nil && !traceErrRE.MatchString(err.Error()) {
		t.Fatalf("error not file:line: field: problem: %v", err)
	}
}

func FuzzMooncake(f *testing.F) {
	f.Add(headLines(f, mooncakeFixture, 2))
	f.Add([]byte(`{"timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [3]}` + "\n" + `{"timestamp": 0}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzTrace(t, "mooncake", data) })
}

// TestTraceScale measures a whole trace, read lazily: set
// MTKIT_TRACE_FILE (and MTKIT_TRACE_FORMAT, default mooncake), e.g. to
// Mooncake's FAST25-release/traces/conversation_trace.jsonl (12,031
// requests); MTKIT_TRACE_LIMIT=N stops after N sessions. It reports the
// time, the peak RSS and the block cache.
func TestTraceScale(t *testing.T) {
	path := os.Getenv("MTKIT_TRACE_FILE")
	if path == "" {
		t.Skip("set MTKIT_TRACE_FILE to a trace file")
	}
	format := cmp.Or(os.Getenv("MTKIT_TRACE_FORMAT"), "mooncake")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	fm, _ := Lookup(format)
	s, err := fm.Open(f, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Since(start)
	var ms runtime.MemStats
	runtime.GC() // the live heap: the parsed trace, the tokenizer, the corpus
	runtime.ReadMemStats(&ms)
	heapOpen := ms.HeapAlloc
	n, turns, bytes := 0, 0, 0
	limit, _ := strconv.Atoi(os.Getenv("MTKIT_TRACE_LIMIT"))
	for limit == 0 || n < limit {
		c, ok := s.Next()
		if !ok {
			break
		}
		n++
		for _, m := range c.Messages {
			if m.Role == conv.RoleUser {
				turns++
				bytes += len(m.Content)
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	status, _ := os.ReadFile("/proc/self/status")
	var hwm string
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	st := s.(*traceSource).blocks.Stats()
	t.Logf("%s: %d sessions, %d requests, %.1f MB of prompts; open (parse, sort) %v, then %.1f MB live heap; all %v; peak RSS %s; blocks made %d, cache hits %d, evicted %d, cached %.1f MB",
		format, n, turns, float64(bytes)/1e6, opened.Round(time.Millisecond), float64(heapOpen)/1e6, time.Since(start).Round(time.Millisecond), hwm, st.Made, st.Hits, st.Evicted, float64(st.CachedBytes)/1e6)
}
