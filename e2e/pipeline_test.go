//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
)

// promptOf returns the messages sent for user turn k (0-based) of c: every
// message up to and including the k-th user message.
func promptOf(t *testing.T, c conv.Conversation, k int) []conv.Message {
	t.Helper()
	users := 0
	for i, m := range c.Messages {
		if m.Role == conv.RoleUser {
			if users == k {
				return c.Messages[:i+1]
			}
			users++
		}
	}
	t.Fatalf("conversation %s has no user turn %d", c.ID, k)
	return nil
}

// checkAnswers checks that every assistant message of the -o conversations
// is the model's real answer of the given length in tokens.
func checkAnswers(t *testing.T, convs []conv.Conversation, n int) {
	t.Helper()
	want := s.info.answer(n)
	for _, c := range convs {
		for i, m := range c.Messages {
			if m.Role == conv.RoleAssistant && m.Content != want {
				t.Errorf("conversation %s message %d: answer %.60q..., want the model's %.60q...", c.ID, i, m.Content, want)
			}
		}
	}
}

// checkPrompts checks every record's server prompt_tokens against the
// ChatML rendering of the history mtrun sent, taken from the -o output.
func checkPrompts(t *testing.T, recs []rawRecord, answered []conv.Conversation) {
	t.Helper()
	byID := map[string]conv.Conversation{}
	for _, c := range answered {
		byID[c.ID] = c
	}
	for _, r := range recs {
		c, ok := byID[r.ConversationID]
		if !ok {
			t.Errorf("record of conversation %q, which -o does not have", r.ConversationID)
			continue
		}
		msgs := promptOf(t, c, r.Turn)
		want := qwen(t).Count(chatML(msgs))
		if got := ptrVal(r.PromptTokens); got != int64(want) {
			t.Errorf("%s turn %d: server prompt_tokens %d, want %d (ChatML of %d messages)", r.ConversationID, r.Turn, got, want, len(msgs))
		}
	}
}

// TestGenRunStats is the main pipeline: mtgen | mtrun | mtstats with the
// model's own tokenizer.
func TestGenRunStats(t *testing.T) {
	const (
		nConv   = 4
		turns   = 3
		input   = 100
		outputN = 20
	)
	dir := t.TempDir()
	genPath, recPath, answers := filepath.Join(dir, "gen.jsonl"), filepath.Join(dir, "records.jsonl"), filepath.Join(dir, "answers.jsonl")
	table := pipeline(t, 5*time.Minute, nil,
		[]string{bin(t, "mtgen"), "--num-conversations", fmt.Sprint(nConv), "--turns", fmt.Sprintf("constant:%d", 2*turns), // messages, as in vLLM
			"--input-tokens", fmt.Sprintf("constant:%d", input), "--output-tokens", fmt.Sprintf("constant:%d", outputN),
			"--tokenizer", s.tokenizer, "--seed", "7"},
		[]string{"tee", genPath},
		mtrunArgs(t, s.eng, "--clients", "2", "-o", answers, "-"),
		[]string{"tee", recPath},
		[]string{bin(t, "mtstats")},
	)
	if !strings.Contains(string(table), fmt.Sprintf("%d records", nConv*turns)) {
		t.Errorf("mtstats table does not count %d records", nConv*turns)
	}
	t.Logf("mtstats:\n%s", table)

	gen := readConversations(t, genPath, mustRead(t, genPath))
	if len(gen) != nConv {
		t.Fatalf("mtgen wrote %d conversations, want %d", len(gen), nConv)
	}
	recs := readRecords(t, recPath, nil)
	if len(recs) != nConv*turns {
		t.Fatalf("%d records, want %d", len(recs), nConv*turns)
	}
	for _, r := range recs {
		if !r.OK() || r.Status != 200 {
			t.Errorf("%s turn %d: status %d error %s %s", r.ConversationID, r.Turn, r.Status, r.ErrorClass, r.Error)
		}
		if ptrVal(r.CompletionTokens) != outputN || r.MaxTokens != outputN || r.FinishReason != "length" {
			t.Errorf("%s turn %d: completion_tokens %d max_tokens %d finish %q, want %d, %d, length",
				r.ConversationID, r.Turn, ptrVal(r.CompletionTokens), r.MaxTokens, r.FinishReason, outputN, outputN)
		}
		if string(r.raw["cached_tokens"]) != "null" {
			t.Errorf("cached_tokens %s, want null", r.raw["cached_tokens"])
		}
		if r.TTFTNs == nil || *r.TTFTNs <= 0 || r.LatencyNs < *r.TTFTNs {
			t.Errorf("%s turn %d: ttft %v latency %d", r.ConversationID, r.Turn, r.TTFTNs, r.LatencyNs)
		}
	}

	// Planned tokens: mtgen's per-message counts are exact in the Qwen
	// tokenizer, and the server sees them plus the template's overhead and
	// the previous real answers (outputN tokens each).
	genByID := map[string]conv.Conversation{}
	for _, c := range gen {
		genByID[c.ID] = c
		for i, m := range c.Messages {
			if m.Role != conv.RoleAssistant && m.Tokens != qwen(t).Count(m.Content) {
				t.Errorf("mtgen %s message %d: tokens %d, content has %d", c.ID, i, m.Tokens, qwen(t).Count(m.Content))
			}
		}
	}
	for _, r := range recs {
		msgs := promptOf(t, genByID[r.ConversationID], r.Turn)
		planned := 0
		for _, m := range msgs {
			if m.Role == conv.RoleAssistant {
				planned += outputN // the real answer replaces the generated one
			} else {
				planned += m.Tokens
			}
		}
		want := planned + 5*len(msgs) + 3
		if got := ptrVal(r.PromptTokens); got != int64(want) {
			t.Errorf("%s turn %d: server prompt_tokens %d, want planned %d + ChatML overhead %d = %d",
				r.ConversationID, r.Turn, got, planned, 5*len(msgs)+3, want)
		}
		if r.Turn == 0 && planned != input && !hasSystem(msgs) {
			t.Errorf("%s: first turn plans %d tokens, want %d", r.ConversationID, planned, input)
		}
	}
	answered := readConversations(t, answers, mustRead(t, answers))
	if len(answered) != nConv {
		t.Errorf("-o has %d conversations, want %d", len(answered), nConv)
	}
	checkAnswers(t, answered, outputN)
	checkPrompts(t, recs, answered)
}

func hasSystem(msgs []conv.Message) bool {
	return len(msgs) > 0 && msgs[0].Role == conv.RoleSystem
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConvertShareGPT converts real ShareGPT conversations with all their
// quirks and replays them: mtconvert | mtrun | mtstats --format json.
func TestConvertShareGPT(t *testing.T) {
	const maxTokens = 24
	dir := t.TempDir()
	convPath, recPath, answers := filepath.Join(dir, "conv.jsonl"), filepath.Join(dir, "records.jsonl"), filepath.Join(dir, "answers.jsonl")
	out := pipeline(t, 10*time.Minute, nil,
		[]string{bin(t, "mtconvert"), "--tokenizer", s.tokenizer, "--max-turns", "6", "--quiet", filepath.Join("..", "internal", "convert", "testdata", "sharegpt_quirks.jsonl")},
		[]string{"tee", convPath},
		mtrunArgs(t, s.eng, "--clients", "4", "--max-tokens", fmt.Sprint(maxTokens), "-o", answers, "-"),
		[]string{"tee", recPath},
		[]string{bin(t, "mtstats"), "--format", "json"},
	)
	var summary struct {
		Summary struct {
			Requests, OK, Failed  int
			InputTokens           int64           `json:"input_tokens"`
			OutputTokens          int64           `json:"output_tokens"`
			CacheHitRate          json.RawMessage `json:"cache_hit_rate"`
			CacheReportedRequests int             `json:"cache_reported_requests"`
		}
	}
	if err := json.Unmarshal(out, &summary); err != nil {
		t.Fatalf("mtstats --format json: %v\n%s", err, out)
	}
	t.Logf("mtstats --format json: %s", out)

	convs := readConversations(t, convPath, mustRead(t, convPath))
	wantRecs := 0
	for _, c := range convs {
		wantRecs += c.UserTurns()
	}
	if len(convs) == 0 || wantRecs == 0 {
		t.Fatalf("mtconvert wrote %d conversations with %d user turns", len(convs), wantRecs)
	}
	recs := readRecords(t, recPath, nil)
	if len(recs) != wantRecs {
		t.Errorf("%d records, want one per user turn: %d", len(recs), wantRecs)
	}
	for _, r := range recs {
		if !r.OK() {
			t.Errorf("%s turn %d: %s %s", r.ConversationID, r.Turn, r.ErrorClass, r.Error)
		}
		if ptrVal(r.CompletionTokens) != maxTokens {
			t.Errorf("%s turn %d: completion_tokens %d, want %d", r.ConversationID, r.Turn, ptrVal(r.CompletionTokens), maxTokens)
		}
	}
	var in, outTok int64
	for _, r := range recs {
		in += ptrVal(r.PromptTokens)
		outTok += ptrVal(r.CompletionTokens)
	}
	sum := summary.Summary
	if sum.Requests != len(recs) || sum.OK != len(recs) || sum.Failed != 0 || sum.InputTokens != in || sum.OutputTokens != outTok {
		t.Errorf("mtstats summary %+v, want %d requests all ok, %d input and %d output tokens", sum, len(recs), in, outTok)
	}
	if string(sum.CacheHitRate) != "null" || sum.CacheReportedRequests != 0 {
		t.Errorf("mtstats cache_hit_rate %s over %d requests, want null: Ollama reports no cached tokens", sum.CacheHitRate, sum.CacheReportedRequests)
	}
	answered := readConversations(t, answers, mustRead(t, answers))
	checkAnswers(t, answered, maxTokens)
	checkPrompts(t, recs, answered)
}
