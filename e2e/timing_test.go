//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
)

// TestPrefixCacheTTFT replays a conversation whose first turn is long: the
// second turn shares that history, which the engine keeps in its slot's KV
// cache, so its TTFT must be clearly lower than the cold first turn's.
func TestPrefixCacheTTFT(t *testing.T) {
	const (
		historyTokens = 2000
		minRatio      = 3.0
	)
	dir := t.TempDir()
	path := filepath.Join(dir, "conv.jsonl")
	salt := fmt.Sprintf("prefix-cache %d", time.Now().UnixNano()) // nothing cached shares it
	writeConversations(t, path, []conv.Conversation{{
		ID: "long-history",
		Messages: []conv.Message{
			{Role: "user", Content: words(t, salt, historyTokens)},
			{Role: "assistant", Content: "x", OutputTokens: 8},
			{Role: "user", Content: "And what happened to the lantern after that?"},
			{Role: "assistant", Content: "x", OutputTokens: 8},
		},
	}})
	out := pipeline(t, 5*time.Minute, nil, mtrunArgs(t, s.eng, "--clients", "1", path))
	recs := readRecords(t, "stdout", out)
	turns := byTurn(recs)["long-history"]
	if len(turns) != 2 {
		t.Fatalf("%d records, want 2", len(turns))
	}
	for _, r := range turns {
		if !r.OK() || r.TTFTNs == nil {
			t.Fatalf("turn %d: %s %s", r.Turn, r.ErrorClass, r.Error)
		}
	}
	cold, warm := ms(turns[0].TTFTNs), ms(turns[1].TTFTNs)
	ratio := cold / warm
	t.Logf("TTFT cold (%d prompt tokens) %.0f ms, warm (%d prompt tokens, shared history) %.0f ms: ratio %.1f",
		ptrVal(turns[0].PromptTokens), cold, ptrVal(turns[1].PromptTokens), warm, ratio)
	if ratio < minRatio {
		t.Errorf("cold/warm TTFT ratio %.1f, want at least %.0f: the engine's prefix cache was not used", ratio, minRatio)
	}
	if ptrVal(turns[1].PromptTokens) <= ptrVal(turns[0].PromptTokens) {
		t.Errorf("second turn prompt %d tokens is not longer than the first %d", ptrVal(turns[1].PromptTokens), ptrVal(turns[0].PromptTokens))
	}
}

// TestQueueing sends twice as many concurrent requests as the engine has
// slots (OLLAMA_NUM_PARALLEL): half of them must wait for a free slot, which
// shows in their TTFT. Answers are long because every Ollama request first
// re-reads the model's metadata (the 151k-token vocabulary) before it is
// queued, 0.1 s on an idle core and seconds on a busy machine, which adds
// to the TTFT of served and queued requests alike.
func TestQueueing(t *testing.T) {
	const (
		n         = 2 * numParallel
		maxTokens = 384
	)
	dir := t.TempDir()
	path := filepath.Join(dir, "conv.jsonl")
	salt := time.Now().UnixNano()
	var convs []conv.Conversation
	for i := range n {
		convs = append(convs, conv.Conversation{
			ID: fmt.Sprintf("queue-%d", i),
			Messages: []conv.Message{
				{Role: "user", Content: fmt.Sprintf("Request %d of run %d: tell me about the harbor.", i, salt)},
				{Role: "assistant", Content: "x", OutputTokens: maxTokens},
			},
		})
	}
	writeConversations(t, path, convs)
	out := pipeline(t, 5*time.Minute, nil, mtrunArgs(t, s.eng, "--clients", fmt.Sprint(n), path))
	recs := readRecords(t, "stdout", out)
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	slices.SortFunc(recs, func(a, b rawRecord) int { return int(*a.TTFTNs - *b.TTFTNs) })
	var ttfts, lats []float64
	for _, r := range recs {
		if !r.OK() || r.TTFTNs == nil {
			t.Fatalf("%s: %s %s", r.ConversationID, r.ErrorClass, r.Error)
		}
		ttfts = append(ttfts, ms(r.TTFTNs))
		lats = append(lats, float64(r.LatencyNs)/1e6)
	}
	served, queued := ttfts[:numParallel], ttfts[numParallel:]
	firstDone := slices.Min(lats[:numParallel])
	t.Logf("TTFT ms of %d concurrent requests on %d slots: served at once %.0f, queued %.0f; first served request ended after %.0f ms",
		n, numParallel, served, queued, firstDone)
	// A request that got a slot at once starts decoding after its prefill;
	// one that queued cannot start before the first served request ends.
	if served[numParallel-1] >= 0.8*firstDone {
		t.Fatalf("served TTFT %.0f ms is close to a whole request's latency %.0f ms: the engine or machine is too slow to tell queueing apart", served[numParallel-1], firstDone)
	}
	if queued[0] < 0.8*firstDone || queued[0] <= served[numParallel-1] {
		t.Errorf("queued TTFT %.0f ms: want above every served TTFT (max %.0f ms) and at least 80%% of the first served request's latency %.0f ms", queued[0], served[numParallel-1], firstDone)
	}

}
