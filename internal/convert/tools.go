package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mtkit/mtkit/internal/conv"
)

// Tool calls come in two shapes:
//
//   - LLaMA-Factory/Glaive ShareGPT: a "function_call" turn whose value is
//     the JSON text {"name": ..., "arguments": {...}} (or a list of them),
//     an "observation" turn with the result, and a top-level "tools" field
//     holding the function definitions as a JSON array or a string of one;
//   - OpenAI: assistant "tool_calls", "tool" messages with "tool_call_id"
//     and a top-level "tools" array.
//
// Both become OpenAI's shape (see conv.ToolCall). Calls of the first shape
// get ids "call_1", "call_2", ... in conversation order, and each
// observation answers the oldest call not answered yet.

// toolState numbers the calls of one record and pairs results with them.
type toolState struct {
	calls   int
	pending []string // ids of calls not answered yet, oldest first
}

func (t *toolState) reset() { t.calls, t.pending = 0, t.pending[:0] }

// functionCall is one call in a function_call turn.
type functionCall struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// functionCalls parses the value of a function_call turn into tool calls
// with fresh ids. Errors start with "value: ".
func (t *toolState) functionCalls(text string) ([]conv.ToolCall, error) {
	data := bytes.TrimSpace([]byte(text))
	var list []functionCall
	if len(data) > 0 && data[0] == '[' {
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("value: function_call is not a JSON call or list of calls: %v", err)
		}
	} else {
		var one functionCall
		if err := json.Unmarshal(data, &one); err != nil {
			return nil, fmt.Errorf(`value: function_call is not a JSON call {"name": ..., "arguments": ...}: %v`, err)
		}
		list = []functionCall{one}
	}
	if len(list) == 0 {
		return nil, errors.New("value: function_call holds no call")
	}
	calls := make([]conv.ToolCall, len(list))
	for i, fc := range list {
		if fc.Name == nil || *fc.Name == "" {
			return nil, fmt.Errorf("value: function_call %d: name missing or empty", i)
		}
		args, err := argumentsText(fc.Arguments)
		if err != nil {
			return nil, fmt.Errorf("value: function_call %d: arguments: %v", i, err)
		}
		t.calls++
		id := "call_" + strconv.Itoa(t.calls)
		t.pending = append(t.pending, id)
		calls[i] = conv.ToolCall{ID: id, Type: "function", Function: conv.FunctionCall{Name: *fc.Name, Arguments: args}}
	}
	return calls, nil
}

// argumentsText renders arguments as OpenAI sends them: a JSON text in a
// string. A string is taken as that text; any other JSON value is
// compacted; missing or null is "{}".
func argumentsText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

// observation returns the id of the call an observation answers.
func (t *toolState) observation() (string, error) {
	if len(t.pending) == 0 {
		return "", errors.New("from: observation answers no function_call (none before it is unanswered)")
	}
	id := t.pending[0]
	t.pending = t.pending[1:]
	return id, nil
}

// openAIToolCalls decodes an OpenAI "tool_calls" array. Arguments given as
// a JSON object instead of a string are accepted and rendered as text.
func openAIToolCalls(raw []byte) ([]conv.ToolCall, error) {
	var list []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("tool_calls: %v", err)
	}
	calls := make([]conv.ToolCall, len(list))
	for i, c := range list {
		if c.Type == "" {
			c.Type = "function"
		}
		args, err := argumentsText(c.Function.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool_calls[%d].function.arguments: %v", i, err)
		}
		calls[i] = conv.ToolCall{ID: c.ID, Type: c.Type, Function: conv.FunctionCall{Name: c.Function.Name, Arguments: args}}
	}
	m := conv.Message{Role: conv.RoleAssistant, ToolCalls: calls}
	if err := m.ValidateTools(); err != nil {
		return nil, err
	}
	return calls, nil
}

// parseTools decodes a top-level "tools" field: a JSON array, or a string
// holding one (LLaMA-Factory), of OpenAI tools {"type": "function",
// "function": {...}} or bare function definitions {"name", "description",
// "parameters"}, which are wrapped as OpenAI tools. An empty list is nil.
func parseTools(raw []byte) ([]json.RawMessage, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("tools: %v", err)
		}
		if s = string(bytes.TrimSpace([]byte(s))); s == "" {
			return nil, nil
		}
		raw = []byte(s)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("tools: want a JSON array of tools (or a string holding one): %v", err)
	}
	out := make([]json.RawMessage, 0, len(list))
	for i, t := range list {
		var probe struct {
			Type *string `json:"type"`
			Name *string `json:"name"`
		}
		if err := json.Unmarshal(t, &probe); err != nil {
			return nil, fmt.Errorf("tools[%d]: want an object: %v", i, err)
		}
		var b bytes.Buffer
		switch {
		case probe.Type != nil:
			json.Compact(&b, t)
		case probe.Name != nil && *probe.Name != "":
			b.WriteString(`{"type":"function","function":`)
			json.Compact(&b, t)
			b.WriteByte('}')
		default:
			return nil, fmt.Errorf(`tools[%d]: neither an OpenAI tool (with "type") nor a function definition (with "name")`, i)
		}
		out = append(out, json.RawMessage(b.Bytes()))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
