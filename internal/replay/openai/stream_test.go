package openai

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// fakeClock returns a clock that advances by one millisecond per call, so
// every data line read by readStream gets its own, increasing time.
func fakeClock() func() time.Time {
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// wantChoice is the expected outcome of one choice.
type wantChoice struct {
	content, reasoning string
	chunks, reason     int
	finish             string
	extra              string
}

func TestReadStream(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100<<10) // over bufio's 64 KiB and readStream's 32 KiB buffer
	for _, tc := range []struct {
		name    string
		in      string
		want    []wantChoice
		usage   int64 // prompt_tokens of the usage object, 0: no usage expected
		extra   string
		wantErr error // nil: success; errStream: a stream error
		done    bool  // [DONE] was seen (End is set either way)
	}{
		{
			name: "basic with done",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{{content: "Hello", chunks: 2, finish: "stop"}},
			done: true,
		},
		{
			name: "event id retry lines and comments",
			in: ": keep-alive\n\nevent: message\nid: 1\nretry: 100\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
				": another comment\nevent: message\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"length\"}]}\n\n" +
				"event: done\ndata: [DONE]\n\n",
			want: []wantChoice{{content: "ab", chunks: 2, finish: "length"}},
			done: true,
		},
		{
			name: "crlf line endings",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\r\n\r\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\r\n\r\n" +
				"data: [DONE]\r\n\r\n",
			want: []wantChoice{{content: "ab", chunks: 2, finish: "stop"}},
			done: true,
		},
		{
			name: "data without space",
			in: "data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" a\"}}]}\n\n" +
				"data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data:[DONE]\n\n",
			want: []wantChoice{{content: " ab", chunks: 2, finish: "stop"}},
			done: true,
		},
		{
			name: "line over 64 KiB",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + long + "\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{{content: long + "!", chunks: 2, finish: "stop"}},
			done: true,
		},
		{
			name: "multi-line data event",
			in: "data: {\"choices\":[{\"index\":0,\n" +
				"data: \"delta\":{\"content\":\"xy\"},\n" +
				"data: \"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{{content: "xy", chunks: 1, finish: "stop"}},
			done: true,
		},
		{
			name: "usage chunk with empty choices",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n" +
				"data: [DONE]\n\n",
			want:  []wantChoice{{content: "a", chunks: 1, finish: "stop"}},
			usage: 7,
			done:  true,
		},
		{
			name: "no done but finish reason",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
			want: []wantChoice{{content: "a", chunks: 1, finish: "stop"}},
		},
		{
			name: "no trailing newline",
			in:   "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}",
			want: []wantChoice{{content: "a", chunks: 1, finish: "stop"}},
		},
		{
			name: "cut without finish",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n",
			want:    []wantChoice{{content: "ab", chunks: 2}},
			wantErr: ErrStream,
		},
		{
			name:    "empty body",
			in:      "",
			wantErr: ErrStream,
		},
		{
			name: "truncated json line",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"cont\n\n" +
				"data: [DONE]\n\n",
			want:    []wantChoice{{content: "a", chunks: 1}},
			wantErr: ErrStream,
		},
		{
			name: "error object mid-stream",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
				"data: {\"error\":{\"message\":\"engine died\",\"type\":\"server_error\",\"code\":500}}\n\n" +
				"data: [DONE]\n\n",
			want:    []wantChoice{{content: "a", chunks: 1}},
			wantErr: ErrStream,
		},
		{
			name: "reasoning_content and reasoning",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think \"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"more\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ans\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"wer\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{{content: "answer", reasoning: "think more", chunks: 4, reason: 2, finish: "stop"}},
			done: true,
		},
		{
			name: "n=3 interleaved",
			in: "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"b1\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a1\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":2,\"delta\":{\"content\":\"c1\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a2\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: {\"choices\":[{\"index\":2,\"delta\":{\"content\":\"c2\"}},{\"index\":1,\"delta\":{\"content\":\"b2\"},\"finish_reason\":\"length\"}]}\n\n" +
				"data: {\"choices\":[{\"index\":2,\"delta\":{\"content\":\"c3\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{
				{content: "a1a2", chunks: 2, finish: "stop"},
				{content: "b1b2", chunks: 2, finish: "length"},
				{content: "c1c2c3", chunks: 3, finish: "stop"},
			},
			done: true,
		},
		{
			name: "completions text",
			in: "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"foo\"}]}\n\n" +
				"data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" bar\",\"finish_reason\":\"length\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{{content: "foo bar", chunks: 2, finish: "length"}},
			done: true,
		},
		{
			name: "kv_transfer_params per choice and top level",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\",\"kv_transfer_params\":{\"remote_block_ids\":[1,2]}}],\"kv_transfer_params\":{\"do_remote_decode\":false}}\n\n" +
				"data: [DONE]\n\n",
			want:  []wantChoice{{content: "a", chunks: 1, finish: "stop", extra: `{"kv_transfer_params":{"remote_block_ids":[1,2]}}`}},
			extra: `{"kv_transfer_params":{"do_remote_decode":false}}`,
			done:  true,
		},
		{
			name: "data after done is ignored",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
				"data: [DONE]\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"zzz\"}}]}\n\n",
			want: []wantChoice{{content: "a", chunks: 1}},
			done: true,
		},
		{
			name: "null content and empty deltas are not tokens",
			in: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			want: []wantChoice{{content: "a", chunks: 1, finish: "stop"}},
			done: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, reader := range []struct {
				name string
				r    func(string) io.Reader
			}{
				{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
				{"bytewise", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
			} {
				resp := &Response{}
				err := ReadStream(reader.r(tc.in), resp, fakeClock())
				switch {
				case tc.wantErr == nil && err != nil:
					t.Fatalf("%s: unexpected error %v", reader.name, err)
				case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
					t.Fatalf("%s: error %v, want %v", reader.name, err, tc.wantErr)
				}
				if tc.wantErr == nil && resp.End.IsZero() {
					t.Errorf("%s: End not set", reader.name)
				}
				if len(resp.Choices) != len(tc.want) {
					t.Fatalf("%s: %d choices, want %d", reader.name, len(resp.Choices), len(tc.want))
				}
				for i, w := range tc.want {
					c := resp.Choices[i]
					if c.Index != i || string(c.Content) != w.content || string(c.Reasoning) != w.reasoning ||
						c.Chunks != w.chunks || c.ReasonChunks != w.reason || c.FinishReason != w.finish || string(c.Extra) != w.extra {
						t.Errorf("%s: choice %d = {index %d content %.40q reasoning %q chunks %d reasoning chunks %d finish %q extra %s}, want %+v",
							reader.name, i, c.Index, c.Content, c.Reasoning, c.Chunks, c.ReasonChunks, c.FinishReason, c.Extra, w)
					}
					checkChoiceTiming(t, c)
				}
				if tc.usage != 0 && (resp.Usage == nil || resp.Usage.PromptTokens == nil || *resp.Usage.PromptTokens != tc.usage) {
					t.Errorf("%s: usage %+v, want prompt_tokens %d", reader.name, resp.Usage, tc.usage)
				}
				if tc.usage == 0 && resp.Usage != nil {
					t.Errorf("%s: unexpected usage %+v", reader.name, resp.Usage)
				}
				if string(resp.Extra) != tc.extra {
					t.Errorf("%s: extra %s, want %s", reader.name, resp.Extra, tc.extra)
				}
			}
		})
	}
}

// checkChoiceTiming checks the timing invariants of one choice.
func checkChoiceTiming(t *testing.T, c *Choice) {
	t.Helper()
	if c.Chunks == 0 {
		if !c.FirstToken.IsZero() || len(c.ITL) != 0 {
			t.Errorf("choice %d: no chunks but first token %v, itl %v", c.Index, c.FirstToken, c.ITL)
		}
		return
	}
	if len(c.ITL) != c.Chunks-1 {
		t.Errorf("choice %d: %d chunks but %d itl gaps", c.Index, c.Chunks, len(c.ITL))
	}
	if c.FirstToken.IsZero() || c.LastToken.Before(c.FirstToken) {
		t.Errorf("choice %d: first token %v, last %v", c.Index, c.FirstToken, c.LastToken)
	}
	var sum int64
	for _, g := range c.ITL {
		if g < 0 {
			t.Errorf("choice %d: negative itl gap %d", c.Index, g)
		}
		sum += g
	}
	if sum != int64(c.LastToken.Sub(c.FirstToken)) {
		t.Errorf("choice %d: itl sum %d != last - first %d", c.Index, sum, c.LastToken.Sub(c.FirstToken))
	}
	if c.ReasonChunks > c.Chunks {
		t.Errorf("choice %d: %d reasoning chunks of %d", c.Index, c.ReasonChunks, c.Chunks)
	}
}

// TestReadStreamReasoningTiming checks that the first token is the first
// reasoning delta and the first content token is timed separately, each at
// the time of the line that carried it.
func TestReadStreamReasoningTiming(t *testing.T) {
	t.Parallel()
	// The clock is read once per data line (not for the blank lines).
	in := "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" + // read 1
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"r1\"}}]}\n\n" + // 2
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"r2\"}}]}\n\n" + // 3
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c1\"},\"finish_reason\":\"stop\"}]}\n\n" + // 4
		"data: [DONE]\n\n" // 5
	clock := fakeClock()
	base := clock()
	at := func(read int) time.Time { return base.Add(time.Duration(read) * time.Millisecond) }
	resp := &Response{}
	if err := ReadStream(strings.NewReader(in), resp, clock); err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if !c.FirstToken.Equal(at(2)) {
		t.Errorf("first token at %v, want the first reasoning line %v", c.FirstToken.Sub(base), at(2).Sub(base))
	}
	if !c.FirstContent.Equal(at(4)) {
		t.Errorf("first content at %v, want %v", c.FirstContent.Sub(base), at(4).Sub(base))
	}
	if want := []int64{int64(time.Millisecond), int64(time.Millisecond)}; len(c.ITL) != 2 || c.ITL[0] != want[0] || c.ITL[1] != want[1] {
		t.Errorf("itl %v, want %v", c.ITL, want)
	}
	if !resp.End.Equal(at(5)) {
		t.Errorf("end at %v, want the [DONE] line %v", resp.End.Sub(base), at(5).Sub(base))
	}
}

// TestReadStreamReadError checks that a read error other than EOF is
// returned as is (it is classified by the caller).
func TestReadStreamReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"), iotest.ErrReader(boom))
	resp := &Response{}
	err := ReadStream(r, resp, fakeClock())
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	if string(resp.Choices[0].Content) != "a" {
		t.Errorf("content %q before the error is lost", resp.Choices[0].Content)
	}
}

// TestApplyWhole checks the parsing of non-streamed responses.
func TestApplyWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		body            string
		content, reason string
		finish          string
		extra           string
		wantErr         bool
	}{
		{
			name:    "chat",
			body:    `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			content: "hi there", finish: "stop",
		},
		{
			name:    "chat with reasoning",
			body:    `{"choices":[{"index":0,"message":{"role":"assistant","content":"B","reasoning_content":"A"},"finish_reason":"length"}]}`,
			content: "B", reason: "A", finish: "length",
		},
		{
			name:    "completions",
			body:    `{"object":"text_completion","choices":[{"index":0,"text":"abc","finish_reason":"length"}]}`,
			content: "abc", finish: "length",
		},
		{
			name:    "vendor extra",
			body:    `{"choices":[{"index":0,"message":{"content":"a"},"finish_reason":"stop"}],"kv_transfer_params":{"k":1}}`,
			content: "a", finish: "stop", extra: `{"kv_transfer_params":{"k":1}}`,
		},
		{name: "truncated", body: `{"choices":[{"index":0,"message":{"content":"a`, wantErr: true},
		{name: "error object", body: `{"error":{"message":"bad"}}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := &Response{}
			err := resp.Apply([]byte(tc.body), time.Now(), false)
			if tc.wantErr {
				if !errors.Is(err, ErrStream) {
					t.Fatalf("error %v, want a stream error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := resp.Choices[0]
			if string(c.Content) != tc.content || string(c.Reasoning) != tc.reason || c.FinishReason != tc.finish || c.Chunks != 1 {
				t.Errorf("got content %q reasoning %q finish %q chunks %d", c.Content, c.Reasoning, c.FinishReason, c.Chunks)
			}
			if string(resp.Extra) != tc.extra {
				t.Errorf("extra %s, want %s", resp.Extra, tc.extra)
			}
		})
	}
}

func TestTopLevelExtras(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, have, want string }{
		{`{"id":"x","choices":[],"usage":null}`, "", ""},
		{`{"id":"x","choices":[],"prefill_node":"a","kv_transfer_params":{"x":1}}`, "", `{"prefill_node":"a"}`},
		{`{"id":"x","foo":null,"bar":[1]}`, `{"kv_transfer_params":{"x":1}}`, `{"bar":[1],"kv_transfer_params":{"x":1}}`},
		{`not json`, `{"a":1}`, `{"a":1}`},
	} {
		if got := string(TopLevelExtras([]byte(tc.body), []byte(tc.have))); got != tc.want {
			t.Errorf("topLevelExtras(%s, %s) = %s, want %s", tc.body, tc.have, got, tc.want)
		}
	}
}

func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n",
		"data:{\"choices\":[{\"index\":2,\"delta\":{\"reasoning_content\":\"r\"},\"finish_reason\":\"stop\"}]}\r\n\r\n",
		": c\nevent: x\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\n\n",
		"data: {\"choices\":[{\"index\":0,\n\ndata: \"delta\":{}}]}\n\n",
		"data: {\"error\":{\"message\":\"x\"}}\n\n",
		"data: {\"choices\":[{\"index\":-5,\"text\":\"t\"},{\"index\":99999,\"text\":\"u\"}]}\n",
		"data: [DONE]",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		resp := &Response{}
		err := ReadStream(bytes.NewReader(in), resp, fakeClock())
		if len(resp.Choices) > 1025 {
			t.Fatalf("%d choices", len(resp.Choices))
		}
		for i, c := range resp.Choices {
			if c.Index != i {
				t.Fatalf("choice %d has index %d", i, c.Index)
			}
			checkChoiceTiming(t, c)
			if c.FirstContent.Before(c.FirstToken) && !c.FirstContent.IsZero() {
				t.Fatalf("choice %d: first content before first token", i)
			}
		}
		if err == nil && resp.End.IsZero() {
			t.Fatal("success without an end time")
		}
	})
}

// TestSpecial8 checks the eight-byte test against plainASCII for every
// byte value at every position, among plain and special neighbours.
func TestSpecial8(t *testing.T) {
	t.Parallel()
	for _, fill := range []byte{'a', ' ', '~', '!'} {
		for c := range 256 {
			for pos := range 8 {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(c)
				if got, want := special8(binary.LittleEndian.Uint64(b[:])), !plainASCII[c]; got != want {
					t.Fatalf("byte %#x at %d among %q: special %v, want %v", c, pos, fill, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		v := rng.Uint64()
		if rng.IntN(2) == 0 {
			v &= 0x7f7f7f7f7f7f7f7f // mostly ASCII
		}
		want := false
		for i := range 8 {
			want = want || !plainASCII[byte(v>>(8*i))]
		}
		if got := special8(v); got != want {
			t.Fatalf("%#016x: special %v, want %v", v, got, want)
		}
	}
}

// TestReadStreamHint checks that the max_tokens hint gives the first
// choice its ITL and content room up front (no growth chunk by chunk), is
// capped, and changes nothing the stream produces.
func TestReadStreamHint(t *testing.T) {
	t.Parallel()
	const n = 100
	body := sseBody(n, false, false)
	plain := &Response{}
	if err := ReadStream(bytes.NewReader(body), plain, fakeClock()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		hint            int
		itlCap, textCap int // at least; 0: not checked
	}{
		{"none", 0, 0, 0},
		{"one", 1, 0, 0},
		{"exact", n, n - 1, n * bytesPerToken},
		{"capped", 1 << 30, maxHint - 1, maxHint * bytesPerToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &Response{hint: tc.hint}
			if err := ReadStream(bytes.NewReader(body), resp, fakeClock()); err != nil {
				t.Fatal(err)
			}
			if len(resp.Choices) != len(plain.Choices) {
				t.Fatalf("%d choices, want %d", len(resp.Choices), len(plain.Choices))
			}
			got, want := resp.Choices[0], plain.Choices[0]
			if string(got.Content) != string(want.Content) || got.Chunks != want.Chunks || !slices.Equal(got.ITL, want.ITL) ||
				got.FinishReason != want.FinishReason || !got.FirstToken.Equal(want.FirstToken) || !resp.End.Equal(plain.End) {
				t.Errorf("hinted stream differs: %+v, want %+v", got, want)
			}
			if tc.itlCap > 0 && (cap(got.ITL) != tc.itlCap || cap(got.Content) < tc.textCap) {
				t.Errorf("room ITL %d, content %d; want %d, at least %d", cap(got.ITL), cap(got.Content), tc.itlCap, tc.textCap)
			}
		})
	}
}

// TestParseUsageAllocs checks that a chunk's usage object (sent in every
// chunk with continuous_usage_stats) costs one allocation, whatever
// fields it holds.
func TestParseUsageAllocs(t *testing.T) {
	for _, tc := range []struct{ name, chunk string }{
		{"counts", `{"choices":[],"usage":{"prompt_tokens":120,"total_tokens":124,"completion_tokens":4}}`},
		{"details", `{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":2}}}`},
		{"nulls", `{"choices":[],"usage":{"prompt_tokens":null,"completion_tokens":4,"prompt_tokens_details":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf [4]fastChoice
			d := []byte(tc.chunk)
			allocs := testing.AllocsPerRun(100, func() {
				if _, u, ok := parseFastChunk(d, buf[:0]); !ok || u == nil {
					t.Fatalf("%s: not parsed", tc.chunk)
				}
			})
			if allocs > 1 {
				t.Errorf("%v allocations per usage object, want 1", allocs)
			}
		})
	}
}
