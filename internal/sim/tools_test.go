package sim

import (
	"net/http"
	"strings"
	"testing"
)

const toolCallBody = `{"messages":[{"role":"user","content":"area of a 5 by 3 rectangle?"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"calculate_area","arguments":"{\"shape\":\"rectangle\",\"dimensions\":[5,3]}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"{\"area\": 15}"}]` +
	`,"tools":[{"type":"function","function":{"name":"calculate_area","description":"Calculate the area of a given shape","parameters":{"type":"object"}}}],"max_tokens":4}`

// TestToolRequests: requests with tools, tool calls and tool results are
// accepted, and the tools and calls count as prompt tokens; malformed tool
// fields are 400 errors naming the field.
func TestToolRequests(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{})
	promptTokens := func(body string) int {
		resp := post(t, ts.URL+"/v1/chat/completions", body)
		defer resp.Body.Close()
		m := decodeJSON(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %v", resp.StatusCode, m)
		}
		return num(t, m, "usage", "prompt_tokens")
	}
	full := promptTokens(toolCallBody)
	noTools := promptTokens(strings.Replace(toolCallBody, `,"tools":[{"type":"function","function":{"name":"calculate_area","description":"Calculate the area of a given shape","parameters":{"type":"object"}}}]`, "", 1))
	if full <= noTools+10 {
		t.Errorf("prompt tokens with tools %d, without %d: the tools do not count", full, noTools)
	}
	noArgs := promptTokens(strings.Replace(toolCallBody, `"{\"shape\":\"rectangle\",\"dimensions\":[5,3]}"`, `"{}"`, 1))
	if full <= noArgs {
		t.Errorf("prompt tokens with arguments %d, without %d: the call does not count", full, noArgs)
	}
	for _, tc := range []struct{ name, old, new, param string }{
		{"tool result without tool_call_id", `"tool_call_id":"call_1",`, ``, "messages[2].tool_call_id"},
		{"tool calls on a user message", `{"role":"user","content":"area of a 5 by 3 rectangle?"}`, `{"role":"user","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "messages[0].tool_calls"},
		{"call without id", `"id":"call_1",`, ``, "messages[1].tool_calls[0].id"},
		{"call of another type", `"type":"function","function":{"name":"calculate_area","arguments"`, `"type":"code","function":{"name":"calculate_area","arguments"`, "messages[1].tool_calls[0].type"},
		{"arguments not a string", `"arguments":"{\"shape\":\"rectangle\",\"dimensions\":[5,3]}"`, `"arguments":{}`, "messages[1].tool_calls[0].function.arguments"},
		{"tools not an array", `"tools":[{"type":"function","function":{"name":"calculate_area","description":"Calculate the area of a given shape","parameters":{"type":"object"}}}]`, `"tools":{}`, "tools"},
		{"tool without a function", `"tools":[{"type":"function","function":{"name":"calculate_area","description":"Calculate the area of a given shape","parameters":{"type":"object"}}}]`, `"tools":[{"type":"function"}]`, "tools[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(toolCallBody, tc.old, tc.new, 1)
			if body == toolCallBody {
				t.Fatal("replacement did not apply")
			}
			resp := post(t, ts.URL+"/v1/chat/completions", body)
			defer resp.Body.Close()
			m := decodeJSON(t, resp.Body)
			e, _ := m["error"].(map[string]any)
			if resp.StatusCode != http.StatusBadRequest || e["param"] != tc.param {
				t.Errorf("status %d, error %v; want 400 with param %q", resp.StatusCode, m, tc.param)
			}
		})
	}
}
