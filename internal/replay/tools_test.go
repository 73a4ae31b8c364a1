package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
)

// glaiveConvs converts the real LLaMA-Factory Glaive tool-calling excerpt
// with mtconvert's converter.
func glaiveConvs(t *testing.T) []conv.Conversation {
	t.Helper()
	var out bytes.Buffer
	_, err := convert.Run(context.Background(), convert.Options{
		Inputs: []string{"../convert/testdata/real/glaive_toolcall_en_demo.json"},
		Strict: true,
		Open: func(name string) (io.ReadCloser, string, error) {
			f, err := os.Open(name)
			return f, name, err
		},
	}, conv.NewWriter(&out))
	if err != nil {
		t.Fatal(err)
	}
	convs, err := conv.ReadAll(&out, "converted")
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

// TestToolConversationsAgainstSimulator: real tool-calling conversations
// replay with one request per assistant message, none failing.
func TestToolConversationsAgainstSimulator(t *testing.T) {
	t.Parallel()
	convs := glaiveConvs(t)
	want, calls := map[string]int{}, 0
	for _, c := range convs {
		for _, m := range c.Messages {
			if m.Role == conv.RoleAssistant {
				want[c.ID]++
				if len(m.ToolCalls) > 0 {
					calls++
				}
			}
		}
	}
	if len(convs) != 7 || calls < 10 {
		t.Fatalf("%d conversations with %d tool-calling messages; the test file changed?", len(convs), calls)
	}
	srv := startSim(t, sim.Config{DefaultMaxTokens: 4})
	res := replayT(t, Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 3}, LimitMaxTokens: 8}, convs)
	got := map[string]int{}
	for _, r := range res.recs {
		if r.Error != "" || r.ErrorClass != "" || r.Retried {
			t.Errorf("%s turn %d: %s %s", r.ConversationID, r.Turn, r.ErrorClass, r.Error)
		}
		got[r.ConversationID]++
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records per conversation (-assistant messages +records):\n%s", diff)
	}
}

// TestToolConversationRequests: each request carries the tools, the
// dataset's tool calls and tool results in the history; the live answer
// (which has no tool call) does not replace the dataset's call.
func TestToolConversationRequests(t *testing.T) {
	t.Parallel()
	tools := []json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"area"}}`)}
	call := []conv.ToolCall{{ID: "call_1", Type: "function", Function: conv.FunctionCall{Name: "area", Arguments: `{"w":5}`}}}
	c := conv.Conversation{ID: "t", Tools: tools, Messages: []conv.Message{
		{Role: conv.RoleUser, Content: "q1"},
		{Role: conv.RoleAssistant, ToolCalls: call, OutputTokens: 7},
		{Role: conv.RoleTool, Content: "15", ToolCallID: "call_1"},
		{Role: conv.RoleAssistant, Content: "it is 15", OutputTokens: 5},
		{Role: conv.RoleUser, Content: "q2"},
		{Role: conv.RoleAssistant, Content: "a2"},
	}}
	fs := newFakeServer(t, nil)
	res := replayT(t, Options{URL: fs.URL, Stream: true}, []conv.Conversation{c})
	reqs := fs.requests()
	if len(reqs) != 3 || len(res.final()) != 3 {
		t.Fatalf("%d requests, %d records; want 3", len(reqs), len(res.final()))
	}
	type wireMsg struct {
		Role       string          `json:"role"`
		Content    string          `json:"content"`
		ToolCalls  []conv.ToolCall `json:"tool_calls,omitempty"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
	}
	var bodies []struct {
		Messages  []wireMsg         `json:"messages"`
		Tools     []json.RawMessage `json:"tools"`
		MaxTokens int               `json:"max_tokens"`
	}
	for _, r := range reqs {
		bodies = append(bodies, struct {
			Messages  []wireMsg         `json:"messages"`
			Tools     []json.RawMessage `json:"tools"`
			MaxTokens int               `json:"max_tokens"`
		}{})
		if err := json.Unmarshal(r.Raw, &bodies[len(bodies)-1]); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range bodies {
		if len(b.Tools) != 1 || string(b.Tools[0]) != string(tools[0]) {
			t.Errorf("request %d: tools %s", i, b.Tools)
		}
	}
	wantSecond := []wireMsg{
		{Role: "user", Content: "q1"},
		{Role: "assistant", Content: reqs[0].Answers[0], ToolCalls: call},
		{Role: "tool", Content: "15", ToolCallID: "call_1"},
	}
	if diff := cmp.Diff(wantSecond, bodies[1].Messages); diff != "" {
		t.Errorf("second request's messages (-want +got):\n%s", diff)
	}
	if bodies[0].MaxTokens != 7 || bodies[1].MaxTokens != 5 {
		t.Errorf("max_tokens %d, %d; want 7 (the tool-calling answer) and 5", bodies[0].MaxTokens, bodies[1].MaxTokens)
	}
	if n := len(bodies[2].Messages); n != 5 || bodies[2].Messages[4].Content != "q2" {
		t.Errorf("third request's messages %+v", bodies[2].Messages)
	}
	// -o writes the conversation as replayed, with its tools and the
	// dataset's tool calls and results.
	if len(res.convs) != 1 || len(res.convs[0].Tools) != 1 || len(res.convs[0].Messages) != 6 ||
		len(res.convs[0].Messages[1].ToolCalls) != 1 || res.convs[0].Messages[2].ToolCallID != "call_1" {
		t.Errorf("-o output %+v", res.convs)
	}
}

// TestToolCallDeltasAreTimed: an answer that calls a tool streams no
// content, only tool-call deltas; they give the first-token time and the
// chunk count (before, such an answer had no TTFT and 0 chunks).
func TestToolCallDeltasAreTimed(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"area","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"w\": 5}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	var resp openai.Response
	for i, c := range chunks {
		if err := resp.Apply([]byte(c), t0.Add(time.Duration(i)*time.Millisecond), true); err != nil {
			t.Fatal(err)
		}
	}
	c := resp.Choices[0]
	if !c.FirstToken.Equal(t0.Add(time.Millisecond)) || !c.FirstContent.Equal(c.FirstToken) || c.Chunks != 2 || string(c.ToolCalls) != `area{"w": 5}` || c.FinishReason != "tool_calls" {
		t.Errorf("first token %v, first content %v, chunks %d, tool calls %q, finish %q", c.FirstToken.Sub(t0), c.FirstContent.Sub(t0), c.Chunks, c.ToolCalls, c.FinishReason)
	}
}

// TestGuardDropsWholeToolChains: the context guard drops a user message
// with its tool-calling answer, the tool results and the final answer
// together, never leaving a tool result without its call.
func TestGuardDropsWholeToolChains(t *testing.T) {
	t.Parallel()
	call := []conv.ToolCall{{ID: "c1", Type: "function", Function: conv.FunctionCall{Name: "f"}}}
	s := &session{hist: []conv.Message{
		{Role: conv.RoleSystem, Content: "s"},
		{Role: conv.RoleUser, Content: "q1"},
		{Role: conv.RoleAssistant, ToolCalls: call},
		{Role: conv.RoleTool, Content: "r", ToolCallID: "c1"},
		{Role: conv.RoleAssistant, Content: "a1"},
		{Role: conv.RoleUser, Content: "q2"},
		{Role: conv.RoleAssistant, Content: "a2"},
	}, tokens: []int{10, 10, 10, 10, 10, 10, 10}}
	// Each message costs 10 + 8 (template overhead), the new user message
	// too: 144 in all. The budget (116 - 8 max_tokens) is met by dropping
	// q1 and its tool call alone, which would leave the tool result first.
	s.guard(conv.Message{Role: conv.RoleUser}, 10, 8, 116)
	var roles []string
	for _, m := range s.hist {
		roles = append(roles, m.Role+":"+m.Content)
	}
	if diff := cmp.Diff([]string{"system:s", "user:q2", "assistant:a2"}, roles); diff != "" {
		t.Errorf("history after the guard (-want +got):\n%s", diff)
	}
	if s.dropped != 4 || len(s.tokens) != len(s.hist) {
		t.Errorf("dropped %d, %d token counts for %d messages", s.dropped, len(s.tokens), len(s.hist))
	}
}

// TestLiveToolCallsFollowDataset: with tool_choice auto and a model that
// calls a tool on about half of its answers, every turn of the real tool
// conversations still succeeds, and the history keeps the dataset's tool
// calls and results whatever the live answer did (the policy of
// docs/mtrun.md): the transcript's calls are the dataset's.
func TestLiveToolCallsFollowDataset(t *testing.T) {
	t.Parallel()
	convs := glaiveConvs(t)
	srv := startSim(t, sim.Config{DefaultMaxTokens: 6, ToolCallRate: 0.5, Seed: 3})
	res := replayT(t, Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 2},
		LimitMaxTokens: 6, ToolChoice: json.RawMessage(`"auto"`)}, convs)
	for _, r := range res.recs {
		if r.ErrorClass != "" {
			t.Errorf("%s turn %d: %s %s", r.ConversationID, r.Turn, r.ErrorClass, r.Error)
		}
	}
	st := srv.Server.Stats()
	if st.ToolCalls == 0 || st.ToolCalls >= st.Completed {
		t.Fatalf("the simulator made %d tool calls in %d answers; want some but not all", st.ToolCalls, st.Completed)
	}
	datasetCalls := map[string][]conv.ToolCall{}
	for _, c := range convs {
		for _, m := range c.Messages {
			if len(m.ToolCalls) > 0 {
				datasetCalls[c.ID] = append(datasetCalls[c.ID], m.ToolCalls...)
			}
		}
	}
	for _, c := range res.convs {
		var got []conv.ToolCall
		for _, m := range c.Messages {
			got = append(got, m.ToolCalls...)
		}
		if diff := cmp.Diff(datasetCalls[c.ID], got); diff != "" {
			t.Errorf("%s: tool calls in the transcript (-dataset +transcript):\n%s", c.ID, diff)
		}
	}
}
