package replay

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/conv"
)

// mapBody is the request body as encoding/json renders it from a map:
// the reference buildBody must match byte for byte (the body mtrun sent
// before it encoded the history once per conversation).
func (o *Options) mapBody(s requestSpec) ([]byte, error) {
	body := make(map[string]any, 12+len(o.ExtraBody))
	for k, v := range o.ExtraBody {
		body[k] = v
	}
	body["model"] = s.Model
	if o.API == APICompletions {
		body["prompt"] = completionPrompt(s.Messages)
	} else {
		msgs := make([]wireMessage, len(s.Messages))
		for i, m := range s.Messages {
			msgs[i] = wireMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		}
		body["messages"] = msgs
		if len(s.Tools) > 0 {
			body["tools"] = s.Tools
			if len(o.ToolChoice) > 0 {
				body["tool_choice"] = o.ToolChoice
			}
		}
	}
	if s.MaxTokens > 0 {
		if o.API == APIChat && o.MaxCompletionTokensField {
			body["max_completion_tokens"] = s.MaxTokens
		} else {
			body["max_tokens"] = s.MaxTokens
		}
	}
	if s.MinTokens > 0 {
		body["min_tokens"] = s.MinTokens
	}
	if o.Stream {
		so := map[string]any{}
		if o.IncludeUsage {
			so["include_usage"] = true
		}
		if o.ContinuousUsage {
			so["continuous_usage_stats"] = true
		}
		body["stream"] = true
		if len(so) > 0 {
			body["stream_options"] = so
		}
	} else {
		body["stream"] = false
	}
	if o.Temperature != nil {
		body["temperature"] = *o.Temperature
	}
	if o.Seed != nil {
		body["seed"] = *o.Seed
	}
	if o.IgnoreEOS {
		body["ignore_eos"] = true
	}
	if o.N > 1 {
		body["n"] = o.N
	}
	if s.ConversationID != "" {
		body["conversation_id"] = s.ConversationID
	}
	return json.Marshal(body)
}

// checkBody builds the body of spec with every prefix of its messages
// pre-encoded and compares it with mapBody.
func checkBody(t *testing.T, o *Options, spec requestSpec) {
	t.Helper()
	want, werr := o.mapBody(spec)
	for k := 0; k <= len(spec.Messages); k++ {
		spec.Encoded = nil
		for _, m := range spec.Messages[:k] {
			e, err := encodeMessage(m)
			if err != nil {
				break
			}
			spec.Encoded = append(spec.Encoded, e)
		}
		got, err := o.buildBody(spec)
		if (err != nil) != (werr != nil) {
			t.Fatalf("prefix %d: error %v, encoding/json: %v", k, err, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("prefix %d:\n got %s\nwant %s", k, got, want)
		}
	}
}

// bodyCase is one request body of the byte tests.
type bodyCase struct {
	name string
	o    Options
	spec requestSpec
}

// bodyCases are the request bodies of TestRequestBodyBytes and
// TestRequestBodyGolden: every option that shapes a body, and text that
// encoding/json escapes.
func bodyCases() []bodyCase {
	temp, tiny, seed := 0.7, 1e-7, int64(-42)
	msgs := []conv.Message{
		{Role: conv.RoleSystem, Content: "be brief"},
		{Role: conv.RoleUser, Content: `a <b> & "c" \ d` + "\n\t\u2028 é \xff"},
		{Role: conv.RoleAssistant, Content: "", ToolCalls: []conv.ToolCall{{ID: "call_1", Type: "function",
			Function: conv.FunctionCall{Name: "get", Arguments: `{"q": "<x>"}`}}}},
		{Role: conv.RoleTool, Content: "42", ToolCallID: "call_1"},
		{Role: conv.RoleUser, Content: "plain"},
	}
	tools := []json.RawMessage{json.RawMessage(`{"type": "function", "function": {"name": "get"}}`)}
	return []bodyCase{
		{"default stream", Options{Stream: true, IncludeUsage: true}, requestSpec{Model: "m", Messages: msgs, MaxTokens: 5}},
		{"continuous usage only", Options{Stream: true, ContinuousUsage: true}, requestSpec{Model: "m", Messages: msgs}},
		{"both usages", Options{Stream: true, IncludeUsage: true, ContinuousUsage: true}, requestSpec{Model: "m", Messages: msgs}},
		{"no stream, no messages", Options{}, requestSpec{Model: "m", Messages: []conv.Message{}}},
		{"max_completion_tokens", Options{MaxCompletionTokensField: true}, requestSpec{Model: "m", Messages: msgs, MaxTokens: 7, MinTokens: 7}},
		{"completions", Options{API: APICompletions, MaxCompletionTokensField: true, Stream: true}, requestSpec{Model: "m", Messages: msgs, MaxTokens: 3}},
		{"sampling", Options{Temperature: &temp, Seed: &seed, IgnoreEOS: true, N: 3}, requestSpec{Model: "m", Messages: msgs}},
		{"tiny temperature", Options{Temperature: &tiny}, requestSpec{Model: "m", Messages: msgs}},
		{"tools", Options{ToolChoice: json.RawMessage(` "auto" `)}, requestSpec{Model: "m", Messages: msgs, Tools: tools}},
		{"tools without choice", Options{}, requestSpec{Model: "m", Messages: msgs, Tools: tools}},
		{"escaped model and id", Options{}, requestSpec{Model: "org/<model>&", Messages: msgs, ConversationID: "c\"1\u2029"}},
		{"extra body", Options{Stream: true, ExtraBody: map[string]any{"top_k": 5, "model": "other", "stream": false,
			"max_tokens": 9, "a<b": []any{1.5, "x&y"}, "zz": map[string]any{"k": nil}, "": true}},
			requestSpec{Model: "m", Messages: msgs}},
		{"extra body kept when unset", Options{ExtraBody: map[string]any{"max_tokens": 9, "conversation_id": "x"}},
			requestSpec{Model: "m", Messages: msgs}},
	}
}

// TestRequestBodyBytes checks that the request body is byte-identical to
// encoding/json's rendering of the body as a map, for every option that
// shapes it and for text that encoding/json escapes.
func TestRequestBodyBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range bodyCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkBody(t, &tc.o, tc.spec)
		})
	}
}

// TestRequestBodyGolden pins the bytes of bodyCases' bodies, each also
// sent to the completions endpoint, in testdata/bodies.golden: a change
// to the body writer or to its reference (mapBody) shows there.
func TestRequestBodyGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for _, tc := range bodyCases() {
		apis := []API{tc.o.API}
		if tc.o.API != APICompletions {
			apis = append(apis, APICompletions)
		}
		for _, api := range apis {
			o := tc.o
			o.API = api
			got, err := o.buildBody(tc.spec)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			fmt.Fprintf(&b, "%s (%s)\n%s\n\n", tc.name, cmp.Or(api, APIChat), got)
		}
	}
	clitest.Golden(t, "testdata/bodies.golden", b.Bytes())
}

// FuzzRequestBody checks the request body against encoding/json's for
// arbitrary message text, model, conversation id and extra-body key.
func FuzzRequestBody(f *testing.F) {
	f.Add("hello", "model", "conv-1", "top_k", 5, true)
	f.Add("<&>\u2028\xff\"\\", "m/é", "", "", 0, false)
	for _, k := range []string{"model", "messages", "stream", "stream_options", "max_tokens", "n", "prompt", "a", "z", "stream_"} {
		f.Add("x", "m", "c", k, 3, true)
	}
	f.Fuzz(func(t *testing.T, text, model, id, key string, maxTokens int, stream bool) {
		o := Options{Stream: stream, IncludeUsage: stream, ExtraBody: map[string]any{key: text}}
		spec := requestSpec{Model: model, ConversationID: id, MaxTokens: maxTokens, Messages: []conv.Message{
			{Role: conv.RoleUser, Content: text},
			{Role: conv.RoleAssistant, Content: fmt.Sprint(len(text))},
			{Role: text, Content: model, ToolCallID: id},
		}}
		checkBody(t, &o, spec)
		o.API = APICompletions
		checkBody(t, &o, spec)
	})
}

// TestHistoryBodyAfterDrops replays a conversation whose history the
// context guard trims turn after turn: every request carries the system
// message, the pairs of user message and live answer not dropped (as
// the records count them), then its own user message, so the history's
// cached encoding follows the drops. (No usage is asked for, so the
// guard counts with the client tokenizer alone.)
func TestHistoryBodyAfterDrops(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, nil)
	msgs := []string{"s:terse"}
	const turns = 8
	for k := range turns {
		msgs = append(msgs, fmt.Sprintf("u:user message number %d, padded to some length", k), "a:")
	}
	c := conversation("g", msgs...)
	for i := range c.Messages {
		c.Messages[i].OutputTokens = 4
	}
	res := replayT(t, Options{URL: fs.URL, Stream: true, Tokenizer: fixedCounter{}, MaxModelLen: 200}, []conv.Conversation{c})
	reqs, recs := fs.requests(), res.final()
	if len(reqs) != turns || len(recs) != turns {
		t.Fatalf("%d requests, %d records", len(reqs), len(recs))
	}
	dropped := 0
	for k, req := range reqs {
		r := recs[k]
		if !r.OK() || r.Turn != k {
			t.Fatalf("record %d: turn %d %s %s", k, r.Turn, r.ErrorClass, r.Error)
		}
		kept := k - r.DroppedMessages/2
		want := []conv.Message{{Role: conv.RoleSystem, Content: "terse"}}
		for j := k - kept; j < k; j++ {
			want = append(want, conv.Message{Role: conv.RoleUser, Content: c.Messages[1+2*j].Content},
				conv.Message{Role: conv.RoleAssistant, Content: reqs[j].Answers[0]})
		}
		want = append(want, conv.Message{Role: conv.RoleUser, Content: c.Messages[1+2*k].Content})
		if !slices.EqualFunc(req.Msgs, want, func(a, b conv.Message) bool { return a.Role == b.Role && a.Content == b.Content }) {
			t.Errorf("request %d (%d dropped):\n got %+v\nwant %+v", k, r.DroppedMessages, req.Msgs, want)
		}
		dropped = r.DroppedMessages
	}
	if dropped == 0 {
		t.Fatal("the guard dropped nothing: the test needs a smaller context")
	}
}

// BenchmarkBuildBody compares the request body of a turn built by
// encoding/json from a map (as before) with the body built from the
// history's cached encoding, for a short and a long history:
//
//	go test -run '^$' -bench BuildBody -benchmem ./internal/replay/
func BenchmarkBuildBody(b *testing.B) {
	o := Options{Stream: true, IncludeUsage: true}
	for _, n := range []int{4, 40} {
		msgs := make([]conv.Message, 0, n+1)
		for i := range n {
			role := conv.RoleUser
			if i%2 == 1 {
				role = conv.RoleAssistant
			}
			msgs = append(msgs, conv.Message{Role: role, Content: fmt.Sprintf("Conversation 7 turn %d: the quick brown fox jumps over the lazy dog", i)})
		}
		msgs = append(msgs, conv.Message{Role: conv.RoleUser, Content: "and the next question"})
		var enc []json.RawMessage
		for _, m := range msgs[:n] {
			e, _ := encodeMessage(m)
			enc = append(enc, e)
		}
		spec := requestSpec{Model: "mtkit-sim", Messages: msgs, MaxTokens: 32}
		b.Run(fmt.Sprintf("map_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.mapBody(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		spec.Encoded = enc
		b.Run(fmt.Sprintf("cached_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.buildBody(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzEncodeMessage checks a message's JSON against encoding/json's.
func FuzzEncodeMessage(f *testing.F) {
	f.Add("user", "hello <b> & \"q\"\n\u2028\xff", "")
	f.Add("tool", "42", "call_1")
	f.Fuzz(func(t *testing.T, role, content, id string) {
		m := conv.Message{Role: role, Content: content, ToolCallID: id}
		want, err := json.Marshal(wireMessage{Role: role, Content: content, ToolCallID: id})
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeMessage(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v: got %s (%v), want %s", m, got, err, want)
		}
	})
}
