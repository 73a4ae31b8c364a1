package convert

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/conv"
)

// Real public files (see testdata/real/PROVENANCE.md).
const (
	realFastChat = "testdata/real/fastchat_dummy_conversation.json"
	realGlaive   = "testdata/real/glaive_toolcall_en_demo.json"
	realOverlap  = "testdata/real/sharegpt_v3_overlap.jsonl"
	realParts    = "testdata/real/sharegpt_v3_parts.jsonl"
)

// TestRealFastChatIdentitiesStaySeparate: FastChat's identity_N records
// are separate conversations; merging them made one 40-message chat.
func TestRealFastChatIdentitiesStaySeparate(t *testing.T) {
	t.Parallel()
	for _, mode := range []PartsMode{PartsAdjacent, PartsAll, PartsNone} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			convs, sum, _, err := convertFiles(t, Options{Inputs: []string{realFastChat}, Parts: mode, Dedupe: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(convs) != 12 {
				t.Fatalf("wrote %d conversations, want 12: %v", len(convs), shapes(convs))
			}
			for i, c := range convs {
				if want := "identity_" + itoa(i); c.ID != want || c.Meta["parts"] != nil {
					t.Errorf("conversation %d: id %q parts %v, want %q and no parts", i, c.ID, c.Meta["parts"], want)
				}
			}
			wantSeparate := 11
			if mode == PartsNone {
				wantSeparate = 0
			}
			if sum.PartsJoined != 0 || sum.PartsSeparate != wantSeparate {
				t.Errorf("joined %d separate %d, want 0 and %d", sum.PartsJoined, sum.PartsSeparate, wantSeparate)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestRealShareGPTOverlapRemoved: ShareGPT V3 part MHOFGzU_17 repeats the
// last assistant message of MHOFGzU_13; the merged conversation holds it
// once (it held it twice, doubling its output_tokens).
func TestRealShareGPTOverlapRemoved(t *testing.T) {
	t.Parallel()
	var first struct {
		Conversations []struct{ Value string }
	}
	data, err := os.ReadFile(realOverlap)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil {
		t.Fatal(err)
	}
	repeated := first.Conversations[len(first.Conversations)-1].Value
	for _, mode := range []PartsMode{PartsAdjacent, PartsAll} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			convs, sum, _, err := convertFiles(t, Options{Inputs: []string{realOverlap}, Parts: mode, Tokenizer: wordCounter{}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(convs) != 1 || convs[0].ID != "MHOFGzU" {
				t.Fatalf("got %v", shapes(convs))
			}
			c := convs[0]
			n := 0
			for _, m := range c.Messages {
				n += strings.Count(m.Content, repeated)
				if m.Role == conv.RoleAssistant && m.Content == repeated && m.OutputTokens != wordCounter.Count(wordCounter{}, repeated) {
					t.Errorf("output_tokens %d, want %d", m.OutputTokens, wordCounter.Count(wordCounter{}, repeated))
				}
			}
			if n != 1 {
				t.Errorf("the %d-character boundary message appears %d times, want 1", len(repeated), n)
			}
			// 5 + 7 source messages, one repeat removed, the leading
			// assistant message of part 13 removed by repair.
			if len(c.Messages) != 10 || sum.PartOverlaps != 1 || sum.PartsJoined != 1 || sum.Removed.Merged != 0 {
				t.Errorf("%d messages, overlaps %d, joined %d, merged %d; want 10, 1, 1, 0", len(c.Messages), sum.PartOverlaps, sum.PartsJoined, sum.Removed.Merged)
			}
			if diff := cmp.Diff([]any{"MHOFGzU_13", "MHOFGzU_17"}, c.Meta["parts"]); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// wordCounter counts white-space separated words.
type wordCounter struct{}

func (wordCounter) Name() string          { return "words" }
func (wordCounter) Count(text string) int { return len(strings.Fields(text)) }

// TestRealShareGPTParts: consecutive parts join; parts with a gap between
// them stay separate and are counted.
func TestRealShareGPTParts(t *testing.T) {
	t.Parallel()
	convs, sum, _, err := convertFiles(t, Options{Inputs: []string{realParts}, Dedupe: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range convs {
		got = append(got, c.ID+":"+itoa(len(c.Messages)))
	}
	// YVLQs21: 6 + 2 messages; skPQbvw_39 and _55 start with an assistant
	// message, removed by repair.
	if diff := cmp.Diff([]string{"YVLQs21:8", "skPQbvw_39:4", "skPQbvw_55:8"}, got); diff != "" {
		t.Error(diff)
	}
	if sum.PartsJoined != 1 || sum.PartsSeparate != 1 || sum.PartOverlaps != 0 {
		t.Errorf("joined %d separate %d overlaps %d, want 1 1 0", sum.PartsJoined, sum.PartsSeparate, sum.PartOverlaps)
	}
}

// TestRealGlaiveToolCalls: LLaMA-Factory's Glaive demo records were
// rejected (unknown role function_call); they become OpenAI tool calls.
func TestRealGlaiveToolCalls(t *testing.T) {
	t.Parallel()
	convs, sum, log, err := convertFiles(t, Options{Inputs: []string{realGlaive}, Strict: true, Tokenizer: wordCounter{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 7 || sum.Malformed != 0 || sum.Removed.Tool != 0 || sum.Tool != 10 || log != "" {
		t.Fatalf("wrote %d, malformed %d, tool removed %d, tool written %d (want 10), log %q", len(convs), sum.Malformed, sum.Removed.Tool, sum.Tool, log)
	}
	if convs[0].Tools != nil {
		t.Errorf(`"tools": "[]" gave %s`, convs[0].Tools)
	}
	area := convs[2]
	roles := ""
	for _, m := range area.Messages {
		r := m.Role[:1]
		if len(m.ToolCalls) > 0 {
			r = "c"
		}
		roles += r
	}
	if roles != "uctauctaucta" {
		t.Errorf("roles %s, want uctauctaucta", roles)
	}
	call := area.Messages[1].ToolCalls[0]
	want := conv.ToolCall{ID: "call_1", Type: "function", Function: conv.FunctionCall{Name: "calculate_area", Arguments: `{"shape":"rectangle","dimensions":[5,3]}`}}
	if diff := cmp.Diff(want, call); diff != "" {
		t.Error(diff)
	}
	// The call's output length is its name and arguments: a replay asks
	// for that many tokens.
	if got, want := area.Messages[1].OutputTokens, 1+1; got != want {
		t.Errorf("tool call output_tokens %d, want %d (name and arguments)", got, want)
	}
	for i, id := range []string{"call_1", "call_2", "call_3"} {
		if got := area.Messages[2+4*i]; got.Role != conv.RoleTool || got.ToolCallID != id {
			t.Errorf("message %d: %s answering %q, want tool answering %q", 2+4*i, got.Role, got.ToolCallID, id)
		}
	}
	if area.Messages[2].Content != `{"area": 15}` {
		t.Errorf("tool result %q", area.Messages[2].Content)
	}
	if len(area.Tools) != 2 {
		t.Fatalf("tools %s", area.Tools)
	}
	var tool struct {
		Type     string
		Function struct {
			Name       string
			Parameters map[string]any
		}
	}
	if err := json.Unmarshal(area.Tools[0], &tool); err != nil || tool.Type != "function" || tool.Function.Name != "calculate_area" || tool.Function.Parameters["type"] != "object" {
		t.Errorf("tools[0] = %s (%v)", area.Tools[0], err)
	}
}
