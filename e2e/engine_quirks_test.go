//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
)

// The tests of this package run one after another on purpose: they measure
// latencies of one shared engine on a small machine, and parallel tests
// would queue behind each other's requests and blur every timing assertion.

// TestEngine checks the harness and the model directly over HTTP: the
// deterministic answer, exact token counts, and the Ollama quirks the
// pipeline has to live with.
func TestEngine(t *testing.T) {
	ctx := context.Background()

	t.Run("models ids end in :latest", func(t *testing.T) {
		resp, err := http.Get(s.eng.URL + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct {
			Data []struct{ ID string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		if !slices.Contains(ids, modelName+":latest") {
			t.Errorf("/v1/models ids %q, want %q", ids, modelName+":latest")
		}
	})

	t.Run("deterministic answer and usage", func(t *testing.T) {
		msgs := []conv.Message{
			{Role: "system", Content: "You are a test model."},
			{Role: "user", Content: "Count the stones by the river, please."},
		}
		for _, n := range []int{1, 37, 300} {
			res, err := s.eng.chat(ctx, chatRequest{Messages: chatMessages(msgs), MaxTokens: n})
			if err != nil {
				t.Fatal(err)
			}
			if want := s.info.answer(n); res.Content != want {
				t.Errorf("max_tokens %d: answer %.80q..., want %.80q...", n, res.Content, want)
			}
			if got := res.usageInt("completion_tokens"); got != n {
				t.Errorf("max_tokens %d: completion_tokens %d", n, got)
			}
			want := qwen(t).Count(chatML(msgs))
			if got := res.usageInt("prompt_tokens"); got != want {
				t.Errorf("prompt_tokens %d, want %d (ChatML rendering)", got, want)
			}
			planned := qwen(t).Count(msgs[0].Content) + qwen(t).Count(msgs[1].Content)
			if want != planned+templateOverhead(t, msgs) || templateOverhead(t, msgs) != 5*len(msgs)+3 {
				t.Errorf("ChatML overhead: %d tokens for %d messages, want %d", want-planned, len(msgs), 5*len(msgs)+3)
			}
			if res.FinishReason != "length" {
				t.Errorf("finish_reason %q, want length", res.FinishReason)
			}
			if _, ok := res.Usage["prompt_tokens_details"]; ok {
				t.Logf("note: Ollama now reports prompt_tokens_details: %s", res.Usage["prompt_tokens_details"])
			}
			if n == 300 && res.TTFT > 0 {
				t.Logf("decode: %d tokens in %v after a TTFT of %v: %.0f tok/s", n, res.Latency-res.TTFT, res.TTFT,
					float64(n-1)/(res.Latency-res.TTFT).Seconds())
			}
		}
	})

	t.Run("temperature 1 still follows the cycle", func(t *testing.T) {
		one := 1.0
		msgs := []conv.Message{{Role: "user", Content: "Sample freely."}}
		res, err := s.eng.chat(ctx, chatRequest{Messages: chatMessages(msgs), MaxTokens: 64, Temperature: &one})
		if err != nil {
			t.Fatal(err)
		}
		if want := s.info.answer(64); res.Content != want {
			t.Errorf("answer %.80q..., want %.80q...", res.Content, want)
		}
	})

	t.Run("no cached-token count in streams", func(t *testing.T) {
		msgs := []conv.Message{{Role: "user", Content: words(t, "cache probe "+time.Now().String(), 300)}}
		for range 2 { // the second request hits the prompt cache, and still says nothing
			res, err := s.eng.chat(ctx, chatRequest{Messages: chatMessages(msgs), MaxTokens: 4})
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := res.Usage["prompt_tokens_details"]; ok && strings.Contains(string(d), "cached_tokens") {
				t.Logf("note: Ollama reports cached tokens now: %s", d)
			}
		}
	})
}

func chatMessages(msgs []conv.Message) []chatMessage {
	out := make([]chatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = chatMessage{Role: m.Role, Content: m.Content}
	}
	return out
}

// TestMtrunDefaultModel runs mtrun without --model: it must pick Ollama's
// "name:latest" id from /v1/models, and record cached_tokens as null.
func TestMtrunDefaultModel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conv.jsonl")
	writeConversations(t, path, []conv.Conversation{{
		ID: "default-model",
		Messages: []conv.Message{
			{Role: "user", Content: "Which model are you?"},
			{Role: "assistant", Content: "one", OutputTokens: 12},
		},
	}})
	out := pipeline(t, 2*time.Minute, nil,
		[]string{bin(t, "mtrun"), "--url", s.eng.URL, "--tokenizer", s.tokenizer, "--quiet", path})
	recs := readRecords(t, "stdout", out)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if !r.OK() || r.Model != modelName+":latest" {
		t.Errorf("record model %q error %q %q, want model %q and no error", r.Model, r.ErrorClass, r.Error, modelName+":latest")
	}
	if ptrVal(r.CompletionTokens) != 12 || r.MaxTokens != 12 {
		t.Errorf("completion_tokens %d max_tokens %d, want 12", ptrVal(r.CompletionTokens), r.MaxTokens)
	}
	if raw := string(r.raw["cached_tokens"]); raw != "null" {
		t.Errorf("cached_tokens %q, want null (Ollama does not report it)", raw)
	}
}
