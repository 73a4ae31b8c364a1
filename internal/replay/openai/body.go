package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
)

// API selects the endpoint.
type API string

// Endpoints mtrun can drive.
const (
	APIChat        API = "chat"
	APICompletions API = "completions"
)

// Params are the body fields every request of a run shares: the
// endpoint, streaming, sampling and the extra fields.
type Params struct {
	// API is the endpoint: APICompletions sends a prompt, anything else
	// chat messages (and max_completion_tokens only with APIChat).
	API API
	// ExtraBody is merged into every request body; a built-in field
	// replaces the extra field of its key.
	ExtraBody                map[string]any
	Stream                   bool
	IncludeUsage             bool // stream_options.include_usage (when streaming)
	ContinuousUsage          bool // stream_options.continuous_usage_stats (when streaming)
	MaxCompletionTokensField bool // send max_completion_tokens instead of max_tokens (chat)
	Temperature              *float64
	Seed                     *int64
	IgnoreEOS                bool
	N                        int // choices; sent when above 1
	// ToolChoice, when set, is sent as tool_choice (a JSON value) with
	// every chat request that carries tools.
	ToolChoice json.RawMessage
}

// Request is everything that shapes one request body: the run's Params
// and the turn's own fields.
type Request struct {
	Params
	Model    string
	Messages []conv.Message
	// Encoded, when not nil, holds the JSON of a prefix of Messages as
	// EncodeMessage gives it (the session's history, encoded once).
	Encoded        []json.RawMessage
	Tools          []json.RawMessage // sent as "tools" (chat API) when non-empty
	MaxTokens      int               // sent when above 0
	MinTokens      int               // sent when above 0
	ConversationID string            // sent as a top-level field when non-empty
}

// wireMessage is a message as sent to the server.
type wireMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  []conv.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// EncodeMessage is the JSON of a message in a request's "messages", as
// encoding/json writes a wireMessage (which it does itself for tool
// calls).
func EncodeMessage(m conv.Message) (json.RawMessage, error) {
	if len(m.ToolCalls) > 0 {
		return json.Marshal(wireMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}
	b := make([]byte, 0, len(m.Role)+len(m.Content)+len(m.ToolCallID)+40)
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role)
	b = append(b, `,"content":`...)
	b = appendString(b, m.Content)
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	}
	return append(b, '}'), nil
}

// Body renders the JSON request body of r. The bytes are those of
// encoding/json marshalling the body as a map (keys sorted, HTML-escaped
// strings), which TestRequestBodyBytes and FuzzRequestBody check, but
// written field by field in key order: the history's messages are
// encoded once (Request.Encoded), not again for every turn.
func Body(r *Request) ([]byte, error) {
	n := 256 + len(r.Model) + len(r.ConversationID)
	for _, e := range r.Encoded {
		n += len(e) + 1
	}
	for _, m := range r.Messages[len(r.Encoded):] {
		n += len(m.Content) + 64
	}
	w := bodyWriter{out: make([]byte, 0, n), extra: r.ExtraBody}
	if len(r.ExtraBody) > 0 {
		w.extras = make([]string, 0, len(r.ExtraBody))
		for k := range r.ExtraBody {
			w.extras = append(w.extras, k)
		}
		slices.Sort(w.extras)
	}
	w.out = append(w.out, '{')
	// The fields in the order of their keys.
	if r.ConversationID != "" {
		w.key("conversation_id")
		w.out = appendString(w.out, r.ConversationID)
	}
	if r.IgnoreEOS {
		w.key("ignore_eos")
		w.out = append(w.out, "true"...)
	}
	if r.MaxTokens > 0 {
		if r.API == APIChat && r.MaxCompletionTokensField {
			w.key("max_completion_tokens")
		} else {
			w.key("max_tokens")
		}
		w.out = strconv.AppendInt(w.out, int64(r.MaxTokens), 10)
	}
	chat := r.API != APICompletions
	if chat {
		w.key("messages")
		w.messages(r.Messages, r.Encoded)
	}
	if r.MinTokens > 0 {
		w.key("min_tokens")
		w.out = strconv.AppendInt(w.out, int64(r.MinTokens), 10)
	}
	w.key("model")
	w.out = appendString(w.out, r.Model)
	if r.N > 1 {
		w.key("n")
		w.out = strconv.AppendInt(w.out, int64(r.N), 10)
	}
	if !chat {
		w.key("prompt")
		w.out = appendString(w.out, CompletionPrompt(r.Messages))
	}
	if r.Seed != nil {
		w.key("seed")
		w.out = strconv.AppendInt(w.out, *r.Seed, 10)
	}
	w.key("stream")
	w.out = strconv.AppendBool(w.out, r.Stream)
	if r.Stream && (r.IncludeUsage || r.ContinuousUsage) {
		w.key("stream_options")
		switch {
		case r.IncludeUsage && r.ContinuousUsage:
			w.out = append(w.out, `{"continuous_usage_stats":true,"include_usage":true}`...)
		case r.IncludeUsage:
			w.out = append(w.out, `{"include_usage":true}`...)
		default:
			w.out = append(w.out, `{"continuous_usage_stats":true}`...)
		}
	}
	if r.Temperature != nil {
		w.key("temperature")
		w.value(*r.Temperature)
	}
	if chat && len(r.Tools) > 0 {
		if len(r.ToolChoice) > 0 {
			w.key("tool_choice")
			w.value(r.ToolChoice)
		}
		w.key("tools")
		w.value(r.Tools)
	}
	w.extrasBefore("", true)
	if w.err != nil {
		return nil, fmt.Errorf("request body: %w", w.err)
	}
	return append(w.out, '}'), nil
}

// bodyWriter writes a request body's fields, merging in the extra
// fields (Params.ExtraBody) at their places in key order; a built-in
// field replaces the extra field of its key.
type bodyWriter struct {
	out    []byte
	extra  map[string]any
	extras []string // keys of the extra fields not written yet, sorted
	err    error
}

// key writes the extra fields whose keys sort before k, then k's key.
func (w *bodyWriter) key(k string) {
	w.extrasBefore(k, false)
	if len(w.extras) > 0 && w.extras[0] == k {
		w.extras = w.extras[1:]
	}
	w.sep()
	w.out = appendString(w.out, k)
	w.out = append(w.out, ':')
}

// extrasBefore writes the extra fields whose keys sort before k (all:
// every one left).
func (w *bodyWriter) extrasBefore(k string, all bool) {
	for len(w.extras) > 0 && (all || w.extras[0] < k) {
		x := w.extras[0]
		w.extras = w.extras[1:]
		w.sep()
		w.out = appendString(w.out, x)
		w.out = append(w.out, ':')
		w.value(w.extra[x])
	}
}

// sep writes the comma between fields.
func (w *bodyWriter) sep() {
	if w.out[len(w.out)-1] != '{' {
		w.out = append(w.out, ',')
	}
}

// value writes v as encoding/json does.
func (w *bodyWriter) value(v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.out = append(w.out, b...)
}

// messages writes the JSON array of msgs, the first len(enc) of them
// already encoded in enc.
func (w *bodyWriter) messages(msgs []conv.Message, enc []json.RawMessage) {
	w.out = append(w.out, '[')
	for i, e := range enc {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		w.out = append(w.out, e...)
	}
	for i, m := range msgs[len(enc):] {
		if i > 0 || len(enc) > 0 {
			w.out = append(w.out, ',')
		}
		e, err := EncodeMessage(m)
		if err != nil && w.err == nil {
			w.err = err
		}
		w.out = append(w.out, e...)
	}
	w.out = append(w.out, ']')
}

// appendString appends s as a JSON string exactly as encoding/json writes
// it: printable ASCII other than '"', '\\', '<', '>' and '&' as it is,
// anything else (escapes, HTML escapes, invalid UTF-8, U+2028) by
// encoding/json itself.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; !plainASCII[c] || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// CompletionPrompt joins a chat history into one text prompt for
// /v1/completions: "System: ...", "User: ...", "Assistant: ...", "Tool:
// ..." paragraphs (an assistant's tool calls follow its text as JSON),
// ending with "Assistant:" for the model to continue.
func CompletionPrompt(msgs []conv.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case conv.RoleSystem:
			b.WriteString("System: ")
		case conv.RoleAssistant:
			b.WriteString("Assistant: ")
		case conv.RoleTool:
			b.WriteString("Tool: ")
		default:
			b.WriteString("User: ")
		}
		b.WriteString(m.Content)
		if len(m.ToolCalls) > 0 {
			calls, _ := json.Marshal(m.ToolCalls)
			b.WriteString("\n")
			b.Write(calls)
		}
		b.WriteString("\n\n")
	}
	b.WriteString("Assistant:")
	return b.String()
}
