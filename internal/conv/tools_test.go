package conv

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestToolCallsRoundTrip writes a tool-calling conversation and reads it
// back unchanged.
func TestToolCallsRoundTrip(t *testing.T) {
	t.Parallel()
	in := Conversation{
		ID:    "glaive-3",
		Tools: []json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"area","parameters":{"type":"object"}}}`)},
		Messages: []Message{
			{Role: RoleUser, Content: "area of 5x3?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "area", Arguments: `{"w":5,"h":3}`}}}},
			{Role: RoleTool, Content: `{"area": 15}`, ToolCallID: "call_1"},
			{Role: RoleAssistant, Content: "15"},
		},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(&in); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"tools":[{"type":"function"`, `"tool_calls":[{"id":"call_1","type":"function","function":{"name":"area","arguments":"{\"w\":5,\"h\":3}"}}]`, `"tool_call_id":"call_1"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("written %s\nlacks %s", buf.String(), want)
		}
	}
	r := NewReader(&buf, "in.jsonl")
	if !r.Scan() {
		t.Fatalf("Scan: %v", r.Err())
	}
	got := r.Conversation()
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(in)
	if !bytes.Equal(a, b) {
		t.Errorf("round trip\n got %s\nwant %s", a, b)
	}
}

// TestValidateToolFields checks the errors for malformed tool fields.
func TestValidateToolFields(t *testing.T) {
	t.Parallel()
	call := func(id, typ, name string) []ToolCall {
		return []ToolCall{{ID: id, Type: typ, Function: FunctionCall{Name: name}}}
	}
	for _, tc := range []struct {
		name string
		m    Message
		want string // "" = valid
	}{
		{"tool ok", Message{Role: RoleTool, ToolCallID: "c"}, ""},
		{"assistant call ok", Message{Role: RoleAssistant, ToolCalls: call("c", "function", "f")}, ""},
		{"tool without id", Message{Role: RoleTool}, "messages[1].tool_call_id: missing on a tool message"},
		{"user with id", Message{Role: RoleUser, ToolCallID: "c"}, "messages[1].tool_call_id: only a tool message answers a call, not user"},
		{"user with calls", Message{Role: RoleUser, ToolCalls: call("c", "function", "f")}, "messages[1].tool_calls: only an assistant message has tool calls, not user"},
		{"call without id", Message{Role: RoleAssistant, ToolCalls: call("", "function", "f")}, "messages[1].tool_calls[0].id: missing or empty"},
		{"call wrong type", Message{Role: RoleAssistant, ToolCalls: call("c", "code", "f")}, `messages[1].tool_calls[0].type: "code" is not "function"`},
		{"call without name", Message{Role: RoleAssistant, ToolCalls: call("c", "function", "")}, "messages[1].tool_calls[0].function.name: missing or empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Conversation{ID: "x", Messages: []Message{{Role: RoleUser, Content: "q"}, tc.m}}
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
