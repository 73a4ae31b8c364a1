//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/stats"
)

// TestRetentionSlots measures Ollama's prompt cache from outside, by TTFT
// alone (Ollama reports no cached_tokens), against what its runner's slot
// policy says (LoadCacheSlot in runner/llamarunner/cache.go and
// runner/ollamarunner/cache.go of v0.17.4). The runner keeps one prompt
// cache per parallel slot (OLLAMA_NUM_PARALLEL=2 here) and, by default
// (findLongestCacheSlot), gives a request the free slot whose cache shares
// the longest prefix with its prompt. Every ChatML prompt starts with the
// same template tokens, so a new conversation shares a few tokens with the
// slot of the previous one, more than with an empty slot, and takes it
// over: one client only ever uses one of the two slots, and a conversation
// finds its context again only when no other conversation came between.
//
// One client replays N = 1, 2, 3 active conversations in rotation, so a
// conversation comes back after N-1 others: its reuse distance is N-1
// conversations. The policy says the later turns hit at distance 0 and miss
// from distance 1 on, two slots notwithstanding: the TTFT-based profile
// must step after 1 conversation. The engine's debug log, which names the
// slot of each request, must show one slot used (it also shows each
// request's reused inputs: the whole history at distance 0, the 28 tokens
// every prompt shares beyond).
//
// (OLLAMA_MULTIUSER_CACHE=1 selects findBestCacheSlot, an LRU over the
// slots that would keep 2 conversations; in v0.17.4 with this model its
// first fork of a slot's prefix, CopyPrefix, aborts the runner:
// GGML_ASSERT "seq_cp() is only supported for full KV buffers".)
func TestRetentionSlots(t *testing.T) {
	const (
		slots    = 2
		capacity = 1    // conversations the default policy keeps for one client
		history  = 1200 // tokens of each conversation's first message
		turns    = 4
	)
	eng, err := startEngine(engineOptions{name: "retention", parallel: slots, context: 8192, debug: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	// By reuse distance N-1: the later turns' TTFT p50, and the first
	// turns' of the same run (always computed in full): the machine's load
	// changes between runs, so each run is placed against its own.
	var later, cold []float64
	for n := 1; n <= slots+1; n++ {
		path := filepath.Join(t.TempDir(), "convs.jsonl")
		salt := fmt.Sprintf("retention %d", time.Now().UnixNano())
		var convs []conv.Conversation
		for i := range n {
			msgs := []conv.Message{
				{Role: "user", Content: words(t, fmt.Sprintf("%s conversation %d:", salt, i), history)},
				{Role: "assistant", Content: "x", OutputTokens: 8},
			}
			for k := 1; k < turns; k++ {
				msgs = append(msgs, conv.Message{Role: "user", Content: fmt.Sprintf("And then, part %d?", k)},
					conv.Message{Role: "assistant", Content: "x", OutputTokens: 8})
			}
			convs = append(convs, conv.Conversation{ID: fmt.Sprintf("r%d-%d", n, i), Messages: msgs})
		}
		writeConversations(t, path, convs)
		out := pipeline(t, 5*time.Minute, nil, mtrunArgs(t, eng, "--clients", "1", "--active", fmt.Sprint(n),
			"--conversation-sampling", "round_robin", path))
		var ttfts, firsts []float64
		ok := 0
		for _, r := range readRecords(t, "stdout", out) {
			if !r.OK() || r.TTFTNs == nil {
				t.Logf("%s turn %d attempt %d: %s %s", r.ConversationID, r.Turn, r.Attempt, r.ErrorClass, r.Error)
				continue
			}
			ok++
			if r.Turn == 0 {
				firsts = append(firsts, ms(r.TTFTNs))
			} else {
				ttfts = append(ttfts, ms(r.TTFTNs))
			}
		}
		if ok != n*turns {
			t.Fatalf("%d active: %d answered turns, want %d", n, ok, n*turns)
		}
		later, cold = append(later, median(ttfts)), append(cold, median(firsts))
	}
	logText, err := os.ReadFile(eng.logPath)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int{}
	for _, m := range slotRE.FindAllStringSubmatch(string(logText), -1) {
		used[m[1]]++
	}
	if len(used) != 1 {
		t.Errorf("requests per cache slot %v: the policy gives one client one slot", used)
	}
	var profile []string
	for d, x := range later {
		profile = append(profile, fmt.Sprintf("%d: %.0f ms (first turns %.0f ms)", d, x, cold[d]))
	}
	t.Logf("%d slots, requests per slot %v: later turns' TTFT p50 by reuse distance in conversations {%s}",
		slots, used, strings.Join(profile, ", "))
	// A hit computes a few tokens, a miss the whole history. Every request
	// also pays Ollama's fixed cost (it re-reads the model's metadata),
	// which grows with the machine's load, and a run's first turns pay more
	// (one run: first turns 4.8 s, the later misses of the same prompt
	// length 2.3 s), so the step is asked of the later turns alone: every
	// miss at least twice the hit, and the hit below half of its run's
	// first turns.
	hits, misses := later[:capacity], later[capacity:]
	if worst, best := slices.Max(hits), slices.Min(misses); best < 2*worst {
		t.Errorf("no step after %d conversation: hits up to %.0f ms, misses from %.0f ms; want misses at least twice the hits", capacity, worst, best)
	}
	for d, x := range hits {
		if x > 0.5*cold[d] {
			t.Errorf("reuse distance %d conversations: TTFT p50 %.0f ms against its run's cold first turns' %.0f ms; the policy says a hit", d, x, cold[d])
		}
	}
}

// slotRE matches the runner's debug line for each request's cache slot.
var slotRE = regexp.MustCompile(`loading cache slot" id=(\d+) `)

// median is the middle value of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, 0.5)
}
