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
)

// Message is one chat message.
type Message struct {
	// Role is "system", "user" or "assistant".
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
}

// Conversation is one multi-turn chat.
type Conversation struct {
	// ID identifies the conversation; unique within a file.
	ID string `json:"id"`
	// Messages is the chat in order; user turns are replayed, assistant
	// messages give target output lengths and reference answers.
	Messages []Message `json:"messages"`
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
// e.g. `messages[3].role: "bot" is not system, user or assistant`.
func (c *Conversation) Validate() error {
	if c.ID == "" {
		return fmt.Errorf("id: missing or empty")
	}
	if len(c.Messages) == 0 {
		return fmt.Errorf("messages: missing or empty")
	}
	for i, m := range c.Messages {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
		case "":
			return fmt.Errorf("messages[%d].role: missing", i)
		default:
			return fmt.Errorf("messages[%d].role: %q is not system, user or assistant", i, m.Role)
		}
		if m.Tokens < 0 {
			return fmt.Errorf("messages[%d].tokens: %d is negative", i, m.Tokens)
		}
		if m.OutputTokens < 0 {
			return fmt.Errorf("messages[%d].output_tokens: %d is negative", i, m.OutputTokens)
		}
		if m.ThinkTimeMs < 0 {
			return fmt.Errorf("messages[%d].think_time_ms: %g is negative", i, m.ThinkTimeMs)
		}
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
