package sim

import (
	"encoding/json"
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

// TestToolChoice: a chat request with tools is answered with a tool call
// when tool_choice asks for one (always for "required" or a named
// function, with probability ToolCallRate for "auto"), in the same shape
// whether streamed or not; a bad tool_choice is a 400 naming it.
func TestToolChoice(t *testing.T) {
	t.Parallel()
	const tools = `[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"get_time"}}]`
	body := func(choice string, stream bool) string {
		b := `{"messages":[{"role":"user","content":"weather in Paris?"}],"tools":` + tools
		if choice != "" {
			b += `,"tool_choice":` + choice
		}
		if stream {
			b += `,"stream":true,"stream_options":{"include_usage":true}`
		}
		return b + `}`
	}
	for _, tc := range []struct {
		name   string
		rate   float64
		choice string
		want   string // function called, "any" for either, "" for none
	}{
		{"required", 0, `"required"`, "any"},
		{"named", 0, `{"type":"function","function":{"name":"get_time"}}`, "get_time"},
		{"none", 1, `"none"`, ""},
		{"auto at rate 0", 0, `"auto"`, ""},
		{"absent at rate 0", 0, ``, ""},
		{"auto at rate 1", 1, `"auto"`, "any"},
		{"absent at rate 1", 1, ``, "any"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ts := newTestServer(t, Config{ToolCallRate: tc.rate})
			// Not streamed.
			resp := post(t, ts.URL+"/v1/chat/completions", body(tc.choice, false))
			m := decodeJSON(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %v", resp.StatusCode, m)
			}
			choice := m["choices"].([]any)[0].(map[string]any)
			msg := choice["message"].(map[string]any)
			calls, _ := msg["tool_calls"].([]any)
			if tc.want == "" {
				if len(calls) != 0 || msg["content"] == nil || choice["finish_reason"] != "stop" {
					t.Fatalf("want a plain answer, got %v", choice)
				}
				return
			}
			if len(calls) != 1 || msg["content"] != nil || choice["finish_reason"] != "tool_calls" {
				t.Fatalf("want one tool call, null content and finish tool_calls, got %v", choice)
			}
			call := calls[0].(map[string]any)
			fn := call["function"].(map[string]any)
			name, args := fn["name"].(string), fn["arguments"].(string)
			if (tc.want != "any" && name != tc.want) || (name != "get_weather" && name != "get_time") || call["type"] != "function" || call["id"] == "" {
				t.Errorf("call %v, want function %s", call, tc.want)
			}
			var parsed struct{ Input string }
			if err := json.Unmarshal([]byte(args), &parsed); err != nil || parsed.Input == "" {
				t.Errorf("arguments %q are not {\"input\": TEXT}: %v", args, err)
			}
			completion := num(t, m, "usage", "completion_tokens")

			// Streamed: the deltas join into the same call.
			resp = post(t, ts.URL+"/v1/chat/completions", body(tc.choice, true))
			evs, err := readSSE(t, resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			var id, sname, sargs, finish string
			deltas := 0
			for _, ev := range evs {
				if ev.err != nil {
					t.Fatalf("malformed chunk %s: %v", ev.data, ev.err)
				}
				chs, _ := ev.obj["choices"].([]any)
				if len(chs) == 0 {
					continue
				}
				ch := chs[0].(map[string]any)
				if f, ok := ch["finish_reason"].(string); ok {
					finish = f
				}
				delta := ch["delta"].(map[string]any)
				tcs, _ := delta["tool_calls"].([]any)
				if len(tcs) == 0 {
					if c, _ := delta["content"].(string); c != "" {
						t.Errorf("content delta %q in a tool-call answer", c)
					}
					continue
				}
				deltas++
				d := tcs[0].(map[string]any)
				if s, ok := d["id"].(string); ok {
					if deltas != 1 {
						t.Errorf("id in delta %d, want only in the first", deltas)
					}
					id = s
					sname = d["function"].(map[string]any)["name"].(string)
				}
				sargs += d["function"].(map[string]any)["arguments"].(string)
			}
			if id != call["id"] || sname != name || sargs != args || finish != "tool_calls" {
				t.Errorf("stream: id %q name %q arguments %q finish %q; not streamed: id %q name %q arguments %q", id, sname, sargs, finish, call["id"], name, args)
			}
			if deltas != completion {
				t.Errorf("%d tool-call deltas, want one per completion token (%d)", deltas, completion)
			}
		})
	}

	_, ts := newTestServer(t, Config{})
	for _, tc := range []struct{ name, body string }{
		{"choice without tools", `{"messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`},
		{"unknown function", `{"messages":[{"role":"user","content":"x"}],"tools":` + tools + `,"tool_choice":{"type":"function","function":{"name":"nope"}}}`},
		{"unknown choice", `{"messages":[{"role":"user","content":"x"}],"tools":` + tools + `,"tool_choice":"always"}`},
		{"malformed choice", `{"messages":[{"role":"user","content":"x"}],"tools":` + tools + `,"tool_choice":{"type":"function"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts.URL+"/v1/chat/completions", tc.body)
			defer resp.Body.Close()
			m := decodeJSON(t, resp.Body)
			e, _ := m["error"].(map[string]any)
			if resp.StatusCode != http.StatusBadRequest || e["param"] != "tool_choice" {
				t.Errorf("status %d, error %v; want 400 with param tool_choice", resp.StatusCode, m)
			}
		})
	}
}
