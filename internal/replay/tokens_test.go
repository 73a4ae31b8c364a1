package replay

import (
	"sync"
	"testing"

	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
)

// countingCounter counts one token per byte and records every text it
// was asked to count.
type countingCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingCounter) Count(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[s]++
	return len(s)
}

// TestTokenizerCountsOnce replays against the simulator with a counting
// tokenizer: each user message and each answer text is counted once per
// turn (the record's count of the answer is reused for the history when
// it is the same text), and the client's prompt estimates are those of
// counting everything afresh.
func TestTokenizerCountsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		reasoning int
		keep      bool
		perTurn   int // Count calls per turn
	}{
		{"content", 0, false, 2},
		{"reasoning kept", 3, true, 2},
		// The history gets the content, the record counts reasoning and
		// content: two texts.
		{"reasoning dropped", 3, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t, sim.Config{ReasoningTokens: tc.reasoning})
			const turns = 3
			tok := &countingCounter{calls: map[string]int{}}
			cv := simpleConvs(1, turns)
			for i := range cv[0].Messages {
				cv[0].Messages[i].OutputTokens = 5 + i
			}
			res := replayT(t, Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true,
				Tokenizer: tok, KeepReasoning: tc.keep, Schedule: schedule.Closed{Clients: 1}}, cv)
			calls := 0
			for _, n := range tok.calls {
				calls += n
			}
			if calls != turns*tc.perTurn {
				t.Errorf("%d Count calls for %d turns, want %d: %v", calls, turns, turns*tc.perTurn, tok.calls)
			}
			// The estimate of turn k: every message sent, a byte a token,
			// plus the template overhead of each.
			out := res.convs[0].Messages
			recs := res.final()
			if len(recs) != turns || len(out) != 2*turns {
				t.Fatalf("%d records, %d messages out", len(recs), len(out))
			}
			for k, r := range recs {
				want := 0
				for _, m := range out[:2*k+1] {
					want += len(m.Content) + messageOverhead
				}
				if r.ClientPromptTokens != int64(want) {
					t.Errorf("turn %d: client prompt tokens %d, want %d", k, r.ClientPromptTokens, want)
				}
			}
		})
	}
}
