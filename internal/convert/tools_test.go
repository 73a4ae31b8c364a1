package convert

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolCalls: LLaMA-Factory/Glaive function_call/observation turns
// (rejected as unknown roles before) and OpenAI tool calls become
// OpenAI-shaped tool calls; malformed ones are reported.
func TestToolCalls(t *testing.T) {
	t.Parallel()
	const tools = `[{"name":"f","description":"d","parameters":{"type":"object"}}]`
	for _, tc := range []struct {
		name      string
		opts      Options
		in        string
		want      string // JSON of the messages and tools written
		malformed string // warning expected instead
	}{
		{
			name: "function_call and observation, tools as a string",
			in:   `{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"{\"name\": \"f\", \"arguments\": {\"x\": 1}}"},{"from":"observation","value":"{\"y\": 2}"},{"from":"gpt","value":"a"}],"tools":` + jsonString(tools) + `}`,
			want: `{"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"role":"tool","content":"{\"y\": 2}","tool_call_id":"call_1"},{"role":"assistant","content":"a"}]}`,
		},
		{
			name: "tools as an array of OpenAI tools, parallel calls, arguments as a string",
			in:   `{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"[{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":1}\"},{\"name\":\"g\"}]"},{"from":"observation","value":"1"},{"from":"observation","value":"2"},{"from":"gpt","value":"a"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
			want: `{"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"role":"tool","content":"1","tool_call_id":"call_1"},{"role":"tool","content":"2","tool_call_id":"call_2"},{"role":"assistant","content":"a"}]}`,
		},
		{
			name: "openai tool calls kept",
			in:   `{"id":"o","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c9","content":"r"},{"role":"assistant","content":"a"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
			want: `{"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c9","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"r","tool_call_id":"c9"},{"role":"assistant","content":"a"}]}`,
		},
		{
			name: "text before the call merges into the calling message",
			in:   `{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"let me look"},{"from":"function_call","value":"{\"name\":\"f\"}"},{"from":"observation","value":"r"},{"from":"gpt","value":"a"}]}`,
			want: `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"let me look","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"r","tool_call_id":"call_1"},{"role":"assistant","content":"a"}]}`,
		},
		{
			name: "a call without its result loses the call (counted as tool)",
			in:   `{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"{\"name\":\"f\"}"},{"from":"gpt","value":"a"},{"from":"human","value":"q2"}]}`,
			want: `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"}]}`,
		},
		{
			name:      "observation without a call",
			in:        `{"conversations":[{"from":"human","value":"q"},{"from":"observation","value":"r"}]}`,
			malformed: "conversations[1].from: observation answers no function_call",
		},
		{
			name:      "function_call that is not JSON",
			in:        `{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"f(x)"}]}`,
			malformed: "conversations[1].value: function_call is not a JSON call",
		},
		{
			name:      "function_call without a name",
			in:        `{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"{\"arguments\":{}}"}]}`,
			malformed: "conversations[1].value: function_call 0: name missing or empty",
		},
		{
			name:      "tools not JSON",
			in:        `{"conversations":[{"from":"human","value":"q"}],"tools":"[{"}`,
			malformed: "tools: want a JSON array of tools",
		},
		{
			name:      "tools of the wrong type",
			in:        `{"conversations":[{"from":"human","value":"q"}],"tools":7}`,
			malformed: "tools: expected array or string, got JSON number",
		},
		{
			name:      "openai tool call without id",
			in:        `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f"}}]}]}`,
			malformed: "messages[1].tool_calls[0].id: missing or empty",
		},
		{
			name:      "tool_call_id on a user message",
			in:        `{"messages":[{"role":"user","content":"q","tool_call_id":"x"}]}`,
			malformed: "messages[0].tool_call_id: only a tool message answers a call, not user",
		},
		{
			name:      "system of the wrong type",
			in:        `{"conversations":[{"from":"human","value":"q"}],"system":["x"]}`,
			malformed: "system: expected string, got JSON array",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			convs, sum, log, err := convertString(t, tc.opts, tc.in+"\n")
			if err != nil {
				t.Fatal(err)
			}
			if tc.malformed != "" {
				if sum.Malformed != 1 || !strings.Contains(log, "in.jsonl:1: "+tc.malformed) {
					t.Errorf("malformed %d, log %q, want a warning with %q", sum.Malformed, log, tc.malformed)
				}
				return
			}
			if len(convs) != 1 {
				t.Fatalf("wrote %d conversations; log %s", len(convs), log)
			}
			got, _ := json.Marshal(struct {
				Tools    []json.RawMessage `json:"tools,omitempty"`
				Messages any               `json:"messages"`
			}{convs[0].Tools, convs[0].Messages})
			var a, b any
			json.Unmarshal(got, &a)
			if err := json.Unmarshal([]byte(tc.want), &b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(b, a); diff != "" {
				t.Errorf("(-want +got):\n%s\ngot %s", diff, got)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestToolCallIDsUniqueAcrossParts: joined parts each number their calls
// from call_1; the later part's ids are renamed so that ids stay unique
// within the conversation.
func TestToolCallIDsUniqueAcrossParts(t *testing.T) {
	t.Parallel()
	part := func(id string) string {
		return `{"id":"` + id + `","conversations":[{"from":"human","value":"q` + id + `"},{"from":"function_call","value":"{\"name\":\"f\"}"},{"from":"observation","value":"r"},{"from":"gpt","value":"a"}]}` + "\n"
	}
	convs, _, log, err := convertString(t, Options{}, part("t_0")+part("t_4"))
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 {
		t.Fatalf("got %v; log %s", shapes(convs), log)
	}
	var ids []string
	for _, m := range convs[0].Messages {
		for _, c := range m.ToolCalls {
			ids = append(ids, "call:"+c.ID)
		}
		if m.ToolCallID != "" {
			ids = append(ids, "result:"+m.ToolCallID)
		}
	}
	if diff := cmp.Diff([]string{"call:call_1", "result:call_1", "call:call_1_p4", "result:call_1_p4"}, ids); diff != "" {
		t.Error(diff)
	}
}
