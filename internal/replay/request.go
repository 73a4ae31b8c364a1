package replay

import (
	"encoding/json"
	"fmt"
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

// requestSpec is everything that shapes one request body.
type requestSpec struct {
	Model          string
	Messages       []conv.Message
	Tools          []json.RawMessage // sent as "tools" (chat API) when non-empty
	MaxTokens      int
	MinTokens      int
	ConversationID string // sent as a top-level field when non-empty
}

// wireMessage is a message as sent to the server.
type wireMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  []conv.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// buildBody renders the JSON request body. It is done before the clock of
// the request starts.
func (o *Options) buildBody(s requestSpec) ([]byte, error) {
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
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	return b, nil
}

// completionPrompt joins a chat history into one text prompt for
// /v1/completions: "System: ...", "User: ...", "Assistant: ...", "Tool:
// ..." paragraphs (an assistant's tool calls follow its text as JSON),
// ending with "Assistant:" for the model to continue.
func completionPrompt(msgs []conv.Message) string {
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
