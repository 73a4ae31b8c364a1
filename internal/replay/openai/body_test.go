package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/conv"
)

// mapBody is the request body as encoding/json renders it from a map:
// Body must match byte for byte (the body mtrun sent
// before it encoded the history once per conversation).
func mapBody(s *Request) ([]byte, error) {
	body := make(map[string]any, 12+len(s.ExtraBody))
	for k, v := range s.ExtraBody {
		body[k] = v
	}
	body["model"] = s.Model
	if s.API == APICompletions {
		body["prompt"] = CompletionPrompt(s.Messages)
	} else {
		msgs := make([]wireMessage, len(s.Messages))
		for i, m := range s.Messages {
			msgs[i] = wireMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		}
		body["messages"] = msgs
		if len(s.Tools) > 0 {
			body["tools"] = s.Tools
			if len(s.ToolChoice) > 0 {
				body["tool_choice"] = s.ToolChoice
			}
		}
	}
	if s.MaxTokens > 0 {
		if s.API == APIChat && s.MaxCompletionTokensField {
			body["max_completion_tokens"] = s.MaxTokens
		} else {
			body["max_tokens"] = s.MaxTokens
		}
	}
	if s.MinTokens > 0 {
		body["min_tokens"] = s.MinTokens
	}
	if s.Stream {
		so := map[string]any{}
		if s.IncludeUsage {
			so["include_usage"] = true
		}
		if s.ContinuousUsage {
			so["continuous_usage_stats"] = true
		}
		body["stream"] = true
		if len(so) > 0 {
			body["stream_options"] = so
		}
	} else {
		body["stream"] = false
	}
	if s.Temperature != nil {
		body["temperature"] = *s.Temperature
	}
	if s.Seed != nil {
		body["seed"] = *s.Seed
	}
	if s.IgnoreEOS {
		body["ignore_eos"] = true
	}
	if s.N > 1 {
		body["n"] = s.N
	}
	if s.ConversationID != "" {
		body["conversation_id"] = s.ConversationID
	}
	return json.Marshal(body)
}

// checkBody builds the body of spec with every prefix of its messages
// pre-encoded and compares it with mapBody.
func checkBody(t *testing.T, spec Request) {
	t.Helper()
	want, werr := mapBody(&spec)
	for k := 0; k <= len(spec.Messages); k++ {
		spec.Encoded = nil
		for _, m := range spec.Messages[:k] {
			e, err := EncodeMessage(m)
			if err != nil {
				break
			}
			spec.Encoded = append(spec.Encoded, e)
		}
		got, err := Body(&spec)
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
	req  Request
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
		{"default stream", Request{Params: Params{Stream: true, IncludeUsage: true}, Model: "m", Messages: msgs, MaxTokens: 5}},
		{"continuous usage only", Request{Params: Params{Stream: true, ContinuousUsage: true}, Model: "m", Messages: msgs}},
		{"both usages", Request{Params: Params{Stream: true, IncludeUsage: true, ContinuousUsage: true}, Model: "m", Messages: msgs}},
		{"no stream, no messages", Request{Model: "m", Messages: []conv.Message{}}},
		{"max_completion_tokens", Request{Params: Params{MaxCompletionTokensField: true}, Model: "m", Messages: msgs, MaxTokens: 7, MinTokens: 7}},
		{"completions", Request{Params: Params{API: APICompletions, MaxCompletionTokensField: true, Stream: true}, Model: "m", Messages: msgs, MaxTokens: 3}},
		{"sampling", Request{Params: Params{Temperature: &temp, Seed: &seed, IgnoreEOS: true, N: 3}, Model: "m", Messages: msgs}},
		{"tiny temperature", Request{Params: Params{Temperature: &tiny}, Model: "m", Messages: msgs}},
		{"tools", Request{Params: Params{ToolChoice: json.RawMessage(` "auto" `)}, Model: "m", Messages: msgs, Tools: tools}},
		{"tools without choice", Request{Model: "m", Messages: msgs, Tools: tools}},
		{"escaped model and id", Request{Model: "org/<model>&", Messages: msgs, ConversationID: "c\"1\u2029"}},
		{"extra body", Request{Params: Params{Stream: true, ExtraBody: map[string]any{"top_k": 5, "model": "other", "stream": false,
			"max_tokens": 9, "a<b": []any{1.5, "x&y"}, "zz": map[string]any{"k": nil}, "": true}},
			Model: "m", Messages: msgs}},
		{"extra body kept when unset", Request{Params: Params{ExtraBody: map[string]any{"max_tokens": 9, "conversation_id": "x"}},
			Model: "m", Messages: msgs}},
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
			checkBody(t, tc.req)
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
		apis := []API{tc.req.API}
		if tc.req.API != APICompletions {
			apis = append(apis, APICompletions)
		}
		for _, api := range apis {
			req := tc.req
			req.API = api
			got, err := Body(&req)
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
		spec := Request{Params: Params{Stream: stream, IncludeUsage: stream, ExtraBody: map[string]any{key: text}}, Model: model, ConversationID: id, MaxTokens: maxTokens, Messages: []conv.Message{
			{Role: conv.RoleUser, Content: text},
			{Role: conv.RoleAssistant, Content: fmt.Sprint(len(text))},
			{Role: text, Content: model, ToolCallID: id},
		}}
		checkBody(t, spec)
		spec.API = APICompletions
		checkBody(t, spec)
	})
}

// BenchmarkBuildBody compares the request body of a turn built by
// encoding/json from a map (as before) with the body built from the
// history's cached encoding, for a short and a long history:
//
//	go test -run '^$' -bench BuildBody -benchmem ./internal/replay/openai/
func BenchmarkBuildBody(b *testing.B) {
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
			e, _ := EncodeMessage(m)
			enc = append(enc, e)
		}
		spec := Request{Params: Params{Stream: true, IncludeUsage: true}, Model: "mtkit-sim", Messages: msgs, MaxTokens: 32}
		b.Run(fmt.Sprintf("map_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mapBody(&spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		spec.Encoded = enc
		b.Run(fmt.Sprintf("cached_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Body(&spec); err != nil {
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
		got, err := EncodeMessage(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v: got %s (%v), want %s", m, got, err, want)
		}
	})
}
