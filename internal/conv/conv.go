// Package conv defines the conversation format shared by mtgen, mtconvert
// and mtrun: one JSON conversation per line (JSONL), plus reading vLLM's
// JSON list of {"id", "messages"} conversations.
package conv

import (
	"encoding/json"
	"fmt"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// Roles of a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool is a tool result, answering one tool call of the assistant
	// message before it (ToolCallID names the call).
	RoleTool = "tool"
)

// Histories of a conversation (Conversation.History).
const (
	HistoryLive = ""
	HistoryNone = "none"
)

// ToolCall is one function call requested by an assistant message, in
// OpenAI's shape.
type ToolCall struct {
	// ID identifies the call; the tool message that answers it carries
	// the same ID in tool_call_id. Unique within a conversation.
	ID string `json:"id"`
	// Type is always "function".
	Type string `json:"type"`
	// Function is the function called and its arguments.
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function of a ToolCall.
type FunctionCall struct {
	// Name is the function's name.
	Name string `json:"name"`
	// Arguments is the arguments as a JSON text (a string holding a JSON
	// object, as OpenAI sends it).
	Arguments string `json:"arguments"`
}

// Message is one chat message.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the text of the message.
	Content string `json:"content"`
	// Tokens is the message's token count in the tokenizer named by the
	// conversation's Tokenizer metadata (mtgen sets it for user messages).
	Tokens int `json:"tokens,omitempty"`
	// OutputTokens is, on an assistant message, the target length of the
	// answer a replay asks for (max_tokens), in the server's tokens.
	OutputTokens int `json:"output_tokens,omitempty"`
	// ThinkTimeMs is, on a user message, the planned pause in milliseconds
	// between the previous answer and sending this message.
	ThinkTimeMs float64 `json:"think_time_ms,omitempty"`
	// ToolCalls is, on an assistant message, the tool calls it makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, on a tool message, the id of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// TimestampMs is, on a user message from a trace, when the trace sent
	// the turn, in milliseconds after the trace's first request; a replay
	// on the trace clock sends it then (scaled by --time-scale).
	TimestampMs *float64 `json:"timestamp_ms,omitempty"`
}

// Conversation is one multi-turn chat.
type Conversation struct {
	// ID identifies the conversation; unique within a file.
	ID string `json:"id"`
	// Messages is the chat in order; user turns are replayed, assistant
	// messages give target output lengths and reference answers.
	Messages []Message `json:"messages"`
	// Tools is the tool (function) definitions offered to the model, in
	// OpenAI's shape ({"type": "function", "function": {...}}); a replay
	// sends them with every request.
	Tools []json.RawMessage `json:"tools,omitempty"`
	// History is how a replay builds each request: HistoryLive (the
	// default: the history so far with the model's real answers, then the
	// new user message) or HistoryNone (each user message is a whole
	// prompt, as in traces whose requests already hold their context).
	History string `json:"history,omitempty"`
	// Meta holds free-form metadata (source dataset, generator settings,
	// tokenizer, prefix group, ...).
	Meta map[string]any `json:"metadata,omitempty"`
}

// UserTurns returns the number of user messages.
func (c *Conversation) UserTurns() int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == RoleUser {
			n++
		}
	}
	return n
}

// Validate checks the fields a replay depends on. Errors name the field,
// e.g. `messages[3].role: "bot" is not system, user, assistant or tool`.
func (c *Conversation) Validate() error {
	if c.ID == "" {
		return fmt.Errorf("id: missing or empty")
	}
	if len(c.Messages) == 0 {
		return fmt.Errorf("messages: missing or empty")
	}
	if c.History != HistoryLive && c.History != HistoryNone {
		return fmt.Errorf("history: %q is not %q", c.History, HistoryNone)
	}
	for i, m := range c.Messages {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		case "":
			return fmt.Errorf("messages[%d].role: missing", i)
		default:
			return fmt.Errorf("messages[%d].role: %q is not system, user, assistant or tool", i, m.Role)
		}
		if err := m.ValidateTools(); err != nil {
			return fmt.Errorf("messages[%d].%w", i, err)
		}
		if m.Tokens < 0 {
			return fmt.Errorf("messages[%d].tokens: %d is negative", i, m.Tokens)
		}
		if m.OutputTokens < 0 {
			return fmt.Errorf("messages[%d].output_tokens: %d is negative", i, m.OutputTokens)
		}
		if m.TimestampMs != nil && (*m.TimestampMs < 0 || m.Role != RoleUser) {
			return fmt.Errorf("messages[%d].timestamp_ms: only a user message has one, and it is not negative", i)
		}
		if m.TimestampMs != nil && *m.TimestampMs > MaxTimestampMs {
			return fmt.Errorf("messages[%d].timestamp_ms: %g is more than %g (200 years)", i, *m.TimestampMs, float64(MaxTimestampMs))
		}
		if m.ThinkTimeMs < 0 {
			return fmt.Errorf("messages[%d].think_time_ms: %g is negative", i, m.ThinkTimeMs)
		}
	}
	return nil
}

// ValidateTools checks the tool-call fields of m; errors start with the
// field name.
func (m *Message) ValidateTools() error {
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return fmt.Errorf("tool_calls: only an assistant message has tool calls, not %s", m.Role)
	}
	for j, tc := range m.ToolCalls {
		switch {
		case tc.ID == "":
			return fmt.Errorf("tool_calls[%d].id: missing or empty", j)
		case tc.Type != "function":
			return fmt.Errorf("tool_calls[%d].type: %q is not \"function\"", j, tc.Type)
		case tc.Function.Name == "":
			return fmt.Errorf("tool_calls[%d].function.name: missing or empty", j)
		}
	}
	switch {
	case m.Role == RoleTool && m.ToolCallID == "":
		return fmt.Errorf("tool_call_id: missing on a tool message")
	case m.Role != RoleTool && m.ToolCallID != "":
		return fmt.Errorf("tool_call_id: only a tool message answers a call, not %s", m.Role)
	}
	return nil
}

// decodeConversation unmarshals and validates one conversation, turning
// JSON type errors into field-named errors.
func decodeConversation(data []byte, c *Conversation) error {
	*c = Conversation{}
	if err := json.Unmarshal(data, c); err != nil {
		return jsonl.FieldError(err)
	}
	return c.Validate()
}

// MaxTimestampMs is the largest timestamp, in milliseconds, that a trace
// or a message may carry: 200 years, under the 292 years of a
// time.Duration, so that the trace clock never overflows (a timestamp of
// 10^18 ms was sent at once).
const MaxTimestampMs = 200 * 36525 * 24 * 3600 * 10 // 200 × 365.25 days, in ms
