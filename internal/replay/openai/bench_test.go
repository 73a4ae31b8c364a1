package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sseBody renders a stream of n token chunks the way internal/sim sends
// them: a role chunk, one token per chunk stamped with sim_sent_ns, a
// usage chunk and [DONE].
func sseBody(n int, completions, continuous bool) []byte {
	var b bytes.Buffer
	head := `data: {"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mtkit-sim","choices":[{"index":0,`
	if completions {
		head = `data: {"id":"cmpl-0123456789abcdef","object":"text_completion","created":1700000000,"model":"mtkit-sim","choices":[{"index":0,`
	} else {
		b.WriteString(head + `"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"sim_sent_ns":1700000000000000000}` + "\n\n")
	}
	words := strings.Fields("the quick brown fox jumps over the lazy dog and runs")
	for i := range n {
		b.WriteString(head)
		w := fmt.Sprintf("%q", " "+words[i%len(words)])
		if completions {
			b.WriteString(`"text":` + w)
		} else {
			b.WriteString(`"delta":{"content":` + w + `}`)
		}
		finish := "null"
		if i == n-1 {
			finish = `"length"`
		}
		b.WriteString(`,"logprobs":null,"finish_reason":` + finish + `}]`)
		if continuous {
			fmt.Fprintf(&b, `,"usage":{"prompt_tokens":120,"total_tokens":%d,"completion_tokens":%d}`, 121+i, i+1)
		}
		fmt.Fprintf(&b, `,"sim_sent_ns":%d}`+"\n\n", 1700000000000000000+int64(i)*1000)
	}
	b.WriteString(head[:strings.Index(head, `"choices":[`)] + `"choices":[],"usage":{"prompt_tokens":120,"total_tokens":` +
		fmt.Sprint(120+n) + `,"completion_tokens":` + fmt.Sprint(n) + `,"prompt_tokens_details":{"cached_tokens":0}},"sim_sent_ns":1}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkReadStream measures SSE parsing of a whole stream: bytes in,
// per-chunk timestamps, content and usage out (ns/chunk reported).
func BenchmarkReadStream(b *testing.B) {
	const n = 1000
	for _, tc := range []struct {
		name                    string
		completions, continuous bool
		hint                    int // response.hint: the request's max_tokens
	}{
		{"chat", false, false, 0},
		{"chat_hinted", false, false, n},
		{"chat_continuous_usage", false, true, 0},
		{"completions", true, false, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := sseBody(n, tc.completions, tc.continuous)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				resp := Response{hint: tc.hint}
				if err := ReadStream(bytes.NewReader(body), &resp, time.Now); err != nil {
					b.Fatal(err)
				}
				if resp.Choices[0].Chunks != n {
					b.Fatalf("chunks = %d, want %d", resp.Choices[0].Chunks, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
		})
	}
}

// BenchmarkReadStreamBody measures what the layers under readStream cost
// per chunk: the SSE bytes of a 1,000-chunk answer as they come off the
// wire, at most 4 KiB per read (about 16 events, as mtrun reads them under
// the capacity load), read either as they are ("sse") or in chunked
// transfer coding, one event per chunk as internal/sim flushes them,
// through net/http's response body as httpwire hands it out ("chunked").
func BenchmarkReadStreamBody(b *testing.B) {
	const n = 1000
	sse := sseBody(n, false, false)
	var wire bytes.Buffer
	wire.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	for ev := range bytes.SplitAfterSeq(sse, []byte("\n\n")) {
		fmt.Fprintf(&wire, "%x\r\n%s\r\n", len(ev), ev)
	}
	wire.WriteString("0\r\n\r\n")
	run := func(b *testing.B, body func(r io.Reader) io.Reader, in []byte) {
		b.ReportAllocs()
		br := bufio.NewReaderSize(nil, 32<<10)
		for b.Loop() {
			br.Reset(&limitedReads{r: bytes.NewReader(in), max: 4 << 10})
			resp := Response{hint: n}
			if err := ReadStream(body(br), &resp, time.Now); err != nil {
				b.Fatal(err)
			}
			if resp.Choices[0].Chunks != n {
				b.Fatalf("chunks = %d, want %d", resp.Choices[0].Chunks, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
	}
	b.Run("sse", func(b *testing.B) {
		run(b, func(r io.Reader) io.Reader { return r }, sse)
	})
	b.Run("chunked", func(b *testing.B) {
		run(b, func(r io.Reader) io.Reader {
			resp, err := http.ReadResponse(r.(*bufio.Reader), nil)
			if err != nil {
				b.Fatal(err)
			}
			return resp.Body
		}, wire.Bytes())
	})
}

// limitedReads returns at most max bytes per Read.
type limitedReads struct {
	r   io.Reader
	max int
}

func (l *limitedReads) Read(p []byte) (int, error) {
	return l.r.Read(p[:min(len(p), l.max)])
}

// BenchmarkApplyChunk measures the parse of one streamed chunk.
func BenchmarkApplyChunk(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mtkit-sim","choices":[{"index":0,"delta":{"content":" fox"},"logprobs":null,"finish_reason":null}],"sim_sent_ns":1700000000000000000}`)
	now := time.Now()
	b.ReportAllocs()
	var resp Response
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			resp = Response{}
		}
		if err := resp.Apply(chunk, now, true); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseFastChunk checks that the reflection-free chunk parser agrees
// with encoding/json whenever it accepts a chunk.
func FuzzParseFastChunk(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" fox"},"logprobs":null,"finish_reason":null}],"sim_sent_ns":17}`,
		`{"choices":[{"index":1,"delta":{"reasoning_content":"hm","role":"assistant"},"finish_reason":"stop"}],"usage":null}`,
		`{"choices":[{"index":0,"text":"hi","finish_reason":"length","logprobs":{"a":[1,2.5e3,-0,true,false,null]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"r","content":null}}],"error":null,"kv_transfer_params":null}`,
		`{"choices":[],"usage":{"prompt_tokens":3}}`,
		`{"Choices":[{"index":0,"delta":{"content":"a"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a\nb"}}]}`,
		`{"choices":[{"index":2,"delta":{"content":"é"}},{"index":0,"delta":{"content":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":null,"tool_calls":[]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":null,"content":"x"}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":120,"total_tokens":124,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}}`,
		`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":null,"completion_tokens":-0,"completion_tokens_details":{"reasoning_tokens":3,"x":[1]},"prompt_tokens_details":null}}`,
		`{"usage":{"prompt_tokens":1.0}}`, `{"usage":{"Prompt_Tokens":1}}`, `{"usage":{"prompt_tokens":1,"prompt_tokens":2}}`, `{"usage":{}}`,
		`{"usage":{"prompt_tokens":99999999999999999999}}`, `{"usage":{"prompt_tokens":1},"usage":null}`,
		`{"choices":null}`, `{}`, `[]`, `{"choices":[{"index":1.5}]}`, `{"choices":[{"index":0,"delta":{"content":"a"},"delta":{}}]}`,
		`{"choices":[{"index":0,"delta":{"content":null},"index":1}]}`, `{"choices":[{"index":-0,"delta":{"content":"a","role":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"},"finish_reason":"stop"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var buf [4]fastChoice
		if _, _, ok := parseFastChunk(data, buf[:0]); ok {
			sameAsJSON(t, data)
		}
	})
}

// FuzzParseFastSkipped checks parseFast's memo of skipped leading bytes:
// after a chunk a has set the memo, a chunk that starts with it parses
// to the same choices and usage as from its first byte (or goes to
// encoding/json, which is slower but as right); it never accepts what
// the parse from the first byte rejects.
func FuzzParseFastSkipped(f *testing.F) {
	for _, s := range [][2]string{
		{`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" fox"},"finish_reason":null}],"sim_sent_ns":17}`,
			`"choices":[{"index":0,"delta":{"content":" dog"},"finish_reason":"stop"}],"sim_sent_ns":18}`},
		{`{"id":"x", "model":"m", "usage":null}`, ` "choices":[]}`},
		{`{"id":"x","model":"m","choices":[]}`, `"Choices":[],"choices":[{"index":0,"delta":{"content":"a"}}]}`},
		{`{"id":"x","choices":[]}`, `"choices":[],"choices":[]}`},
		{`{"id":"x","error":null}`, `"error":{"message":"boom"}}`},
		{`{"id":"x","usage":null}`, `"usage":{"prompt_tokens":1},"usage":null}`},
		{`{"id":"x","created":1,"choices":[]}`, `]`},
		{`{}`, `"choices":[]}`},
		{`{"id":"x"}`, `"choices":[]}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var buf [4]fastChoice
		var memo []byte
		parseFast(a, buf[:0], &memo)
		d := append(bytes.Clone(memo), b...)
		kept := bytes.Clone(memo)
		var b1, b2 [4]fastChoice
		cs1, u1, ok1 := parseFast(d, b1[:0], &memo)
		cs2, u2, ok2 := parseFastChunk(d, b2[:0])
		if ok1 && !ok2 {
			t.Fatalf("memo %q: %q accepted, from its first byte rejected", kept, d)
		}
		if ok1 && (!reflect.DeepEqual(cs1, cs2) || !reflect.DeepEqual(u1, u2)) {
			t.Fatalf("memo %q: %q parsed to %+v %s, from its first byte %+v %s", kept, d, cs1, jsonOf(u1), cs2, jsonOf(u2))
		}
		if len(kept) > 0 && !bytes.Equal(memo, kept) {
			t.Fatalf("memo %q changed to %q by a chunk that starts with it", kept, memo)
		}
	})
}

// TestParseFastSkipped checks that the memo holds what a stream's chunks
// repeat (the simulator's id, object, created and model) and is used:
// a chunk that starts with it is read from there, one that does not
// replaces it.
func TestParseFastSkipped(t *testing.T) {
	t.Parallel()
	events := bytes.Split(bytes.TrimSuffix(sseBody(3, false, false), []byte("\n\n")), []byte("\n\n"))
	var memo []byte
	want := `{"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk","created":1700000000,"model":"mtkit-sim",`
	for i, ev := range events[:4] {
		d := bytes.TrimPrefix(ev, []byte("data: "))
		var buf [4]fastChoice
		if _, _, ok := parseFast(d, buf[:0], &memo); !ok {
			t.Fatalf("event %d: %q not on the fast path", i, d)
		}
		if string(memo) != want {
			t.Fatalf("event %d: memo %q, want %q", i, memo, want)
		}
	}
	// Only the memo's bytes are skipped: a chunk cut right after them
	// is rejected, as it is from its first byte.
	var buf [4]fastChoice
	if _, _, ok := parseFast([]byte(want), buf[:0], &memo); ok {
		t.Errorf("%q accepted", want)
	}
	other := []byte(`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"a"}}]}`)
	if _, _, ok := parseFast(other, buf[:0], &memo); !ok || string(memo) != `{"id":"chatcmpl-1",` {
		t.Errorf("after %q: ok %v, memo %q", other, ok, memo)
	}
}

// sameAsJSON checks that a chunk the fast parser accepts applies as
// encoding/json applies it.
func sameAsJSON(t *testing.T, data []byte) {
	t.Helper()
	now := time.Unix(1, 0)
	var fast, slow Response
	if err := fast.Apply(data, now, true); err != nil {
		t.Fatalf("fast path accepted %q, apply failed: %v", data, err)
	}
	if err := slow.applyJSON(data, now, true); err != nil {
		t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", data, err)
	}
	if len(fast.Choices) != len(slow.Choices) || !reflect.DeepEqual(fast.Usage, slow.Usage) || slow.Extra != nil {
		t.Fatalf("%q: fast %d choices, slow %d; usage %s, slow %s; extra %s", data, len(fast.Choices), len(slow.Choices),
			jsonOf(fast.Usage), jsonOf(slow.Usage), slow.Extra)
	}
	for i := range fast.Choices {
		a, b := fast.Choices[i], slow.Choices[i]
		if string(a.Content) != string(b.Content) || string(a.Reasoning) != string(b.Reasoning) || a.FinishReason != b.FinishReason ||
			a.Chunks != b.Chunks || a.ReasonChunks != b.ReasonChunks || !a.FirstToken.Equal(b.FirstToken) || b.Extra != nil {
			t.Fatalf("%q: choice %d: fast %+v, slow %+v", data, i, a, b)
		}
	}
}

// TestParseFastChunkShapes checks which chunks the fast parser takes:
// white space anywhere JSON allows it (the compact-JSON shortcuts of
// colon, next and ws must fall back to the general case), and keys that
// encoding/json would match (exactly or case-folded) but the fast path
// does not read, which must send the chunk to encoding/json.
func TestParseFastChunkShapes(t *testing.T) {
	for _, tc := range []struct {
		chunk string
		fast  bool
	}{
		{`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, true},
		{`{ "choices" : [ { "index" : 0 , "delta" : { "content" : "a" } } ] }`, true},
		{"{\"choices\":\t[{\"index\":\n0,\r\"delta\":{\"content\":\"a\"}}],\n\"id\": \"x\"}", true},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens": 1, "completion_tokens" :2}}`, true},
		{`{"choices":[{"index":0,"delta":{"content":"a", "role":"assistant"}}], "model":"m"}`, true},
		{`{"choices":[{"index":0,"delta":{"content":"a"}},]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}]` + "\x01}", false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],` + "\x01" + `"id":"x"}`, false},
		{`{"choices":[{"index":0,"message":{"content":"a"}}]}`, false},
		{`{"choices":[{"index":0,"Message":{"content":"a"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"Content":"a"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],"ERROR":{"message":"x"}}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"Completion_tokens":1}}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],"Model":"m","ID":"x"}`, true},
		// Choices of the common shape and near misses.
		{`{"choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]}`, true},
		{`{"choices":[{"index":3,"delta":{"content":"a","role":"x"},"logprobs":null}]}`, true},
		{`{"choices":[{"index":0,"delta":{"content":"a"} ,"finish_reason":null}]}`, true},
		{`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`, true},
		{`{"choices":[{"index":-0,"delta":{"content":"a"}}]}`, true},
		{`{"choices":[{"index":1.5,"delta":{"content":"a"}}]}`, false},
		{`{"choices":[{"index":99999999999999999999,"delta":{"content":"a"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"},"index":1}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"},"delta":{}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a\\n"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}]}`, false},
	} {
		var buf [4]fastChoice
		_, _, ok := parseFastChunk([]byte(tc.chunk), buf[:0])
		if ok != tc.fast {
			t.Errorf("%q: fast path %v, want %v", tc.chunk, ok, tc.fast)
		}
		if ok {
			sameAsJSON(t, []byte(tc.chunk))
		}
	}
}

// jsonOf is v as JSON, for messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
