//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/stats"
)

// TestRetentionSlots measures Ollama's prompt cache from outside, by TTFT
// alone (Ollama reports no cached_tokens), against what its runner's slot
// policy says (runner/ollamarunner/cache.go and runner/llamarunner/cache.go
// of v0.17.4, LoadCacheSlot). The runner keeps one prompt cache per
// parallel slot (OLLAMA_NUM_PARALLEL=2 here). One client replays N active
// conversations in rotation, so between two turns of a conversation the
// N-1 others each send one: its reuse distance is N-1 conversations.
//
//   - findLongestCacheSlot (the default) takes the free slot whose cache
//     shares the longest prefix with the prompt. Every ChatML prompt starts
//     with the same template tokens, so a new conversation shares a few
//     tokens with the slot of the previous one, more than with the empty
//     slot, and overwrites it: one client only ever uses one slot, and a
//     conversation comes back to its cache only when no other came between.
//     The step is at 1 conversation.
//   - findBestCacheSlot (OLLAMA_MULTIUSER_CACHE=1) takes the slot whose
//     whole cache is a prefix of the prompt, else the least recently used
//     slot: an LRU of 2 conversations. The step is at 2.
//
// Each later turn's TTFT is a hit (only its new tokens are computed) or a
// miss (the whole history is); the test asserts the median of the later
// turns for each N on the side of the step the policy says.
func TestRetentionSlots(t *testing.T) {
	const (
		slots   = 2
		history = 800 // tokens of each conversation's first message
		turns   = 4
	)
	for _, p := range []struct {
		name      string
		multiUser bool
		capacity  int // conversations the policy keeps for one client
	}{
		{"longest", false, 1},
		{"multiuser", true, slots},
	} {
		t.Run(p.name, func(t *testing.T) {
			eng, err := startEngine(engineOptions{name: "retention-" + p.name, parallel: slots, context: 8192, multiUser: p.multiUser})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Stop()
			var cold []float64   // first turns: always computed in full
			later := []float64{} // later turns' TTFT p50 by N-1
			for n := 1; n <= slots+1; n++ {
				path := filepath.Join(t.TempDir(), "convs.jsonl")
				salt := fmt.Sprintf("retention %s %d", p.name, time.Now().UnixNano())
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
				recs := readRecords(t, "stdout", out)
				if len(recs) != n*turns {
					t.Fatalf("%d active: %d records, want %d", n, len(recs), n*turns)
				}
				var ttfts []float64
				for _, r := range recs {
					if !r.OK() || r.TTFTNs == nil {
						t.Fatalf("%s turn %d: %s %s", r.ConversationID, r.Turn, r.ErrorClass, r.Error)
					}
					if r.Turn == 0 {
						cold = append(cold, ms(r.TTFTNs))
					} else {
						ttfts = append(ttfts, ms(r.TTFTNs))
					}
				}
				later = append(later, median(ttfts))
			}
			coldP50 := median(cold)
			var profile []string
			for d, x := range later {
				profile = append(profile, fmt.Sprintf("%d: %.0f ms", d, x))
			}
			t.Logf("policy %s, %d slots: first-turn TTFT p50 %.0f ms; later turns' TTFT p50 by reuse distance in conversations {%s}",
				p.name, slots, coldP50, strings.Join(profile, ", "))
			// A hit computes a few tokens, a miss the whole history (longer
			// than the first turn's): the step is several times the hits.
			hits, misses := later[:p.capacity], later[p.capacity:]
			if worst, best := slices.Max(hits), slices.Min(misses); best < 3*worst {
				t.Errorf("no step after %d conversations: hits up to %.0f ms, misses from %.0f ms; want misses at least 3x the hits", p.capacity, worst, best)
			}
			for d, x := range later {
				if hit := d < p.capacity; hit && x > 0.5*coldP50 || !hit && x < 0.7*coldP50 {
					t.Errorf("reuse distance %d conversations: TTFT p50 %.0f ms against a cold first turn's %.0f ms; the policy says a %s",
						d, x, coldP50, map[bool]string{true: "hit", false: "miss"}[hit])
				}
			}
		})
	}
}

// median is the middle value of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, 0.5)
}
