package replay

import (
	"sync"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
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

// TestLoopCountsOnce: with --loop each source message is counted once
// for all the passes (srcCounts), and every record's prompt estimate is
// still that of counting everything afresh, for conversations that
// share their first message and differ after it.
func TestLoopCountsOnce(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{})
	const turns, passes = 3, 3
	cv := []conv.Conversation{
		conversation("a", "u:the same first question", "a:x", "u:short", "a:y", "u:a third question", "a:z"),
		conversation("b", "u:the same first question", "a:x", "u:a much longer second question", "a:y", "u:3rd", "a:z"),
	}
	for _, c := range cv {
		for i := range c.Messages {
			c.Messages[i].OutputTokens = 4
		}
	}
	tok := &countingCounter{calls: map[string]int{}}
	res := replayT(t, Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true,
		Tokenizer: tok, Schedule: schedule.Closed{Clients: 1}, Loop: true, MaxRequests: passes * len(cv) * turns}, cv)
	if n := len(res.final()); n != passes*len(cv)*turns {
		t.Fatalf("%d requests, want %d", n, passes*len(cv)*turns)
	}
	for _, c := range cv {
		for _, m := range c.Messages {
			if m.Role != conv.RoleUser {
				continue
			}
			// "the same first question" is in both conversations: once each.
			want := 1
			if m.Content == cv[0].Messages[0].Content {
				want = 2
			}
			if got := tok.calls[m.Content]; got != want {
				t.Errorf("%q counted %d times in %d passes, want %d", m.Content, got, passes, want)
			}
		}
	}
	checkEstimates(t, res)
}

// checkEstimates checks each record's client prompt estimate against the
// conversation as sent, a token a byte plus each message's overhead.
func checkEstimates(t *testing.T, res *result) {
	t.Helper()
	recs := res.byConv()
	for _, c := range res.convs {
		rs := recs[c.ID]
		if len(rs) == 0 || 2*len(rs) != len(c.Messages) {
			t.Fatalf("%s: %d records, %d messages out", c.ID, len(rs), len(c.Messages))
		}
		for k, r := range rs {
			want := 0
			for _, m := range c.Messages[:2*k+1] {
				want += len(m.Content) + messageOverhead
			}
			if r.ClientPromptTokens != int64(want) {
				t.Errorf("%s turn %d: client prompt tokens %d, want %d", c.ID, k, r.ClientPromptTokens, want)
			}
		}
	}
}

// TestSrcCountsChangedText: a count kept for a source message serves
// only the text it counted: a message changed after it was counted (in
// place, to another text of the same length or not) is counted anew,
// and another conversation's counts are its own.
func TestSrcCountsChangedText(t *testing.T) {
	tok := &countingCounter{calls: map[string]int{}}
	o := &Options{Tokenizer: tok}
	a := conversation("a", "u:four", "a:x", "u:second", "a:y")
	b := conversation("b", "u:four", "a:x", "u:2nd", "a:y")
	ca, cb := newSrcCounts(&a), newSrcCounts(&b)
	count := func(c *conv.Conversation, counts srcCounts, i int) int {
		return newSession(c, counts, c.ID, 0).countSrc(i, o)
	}
	for pass := range 2 {
		if n := count(&a, ca, 0); n != 4 {
			t.Fatalf("pass %d: a[0] counted %d, want 4", pass, n)
		}
		if n := count(&a, ca, 2); n != 6 {
			t.Fatalf("pass %d: a[2] counted %d, want 6", pass, n)
		}
		if n := count(&b, cb, 2); n != 3 {
			t.Fatalf("pass %d: b[2] counted %d, want 3 (not a's count)", pass, n)
		}
	}
	if tok.calls["second"] != 1 || tok.calls["2nd"] != 1 {
		t.Fatalf("counts not kept across passes: %v", tok.calls)
	}
	for _, edit := range []string{"other!", "longer text"} {
		a.Messages[2].Content = edit
		if n := count(&a, ca, 2); n != len(edit) {
			t.Errorf("a[2] changed to %q: counted %d, want %d", edit, n, len(edit))
		}
		if tok.calls[edit] != 1 {
			t.Errorf("a[2] changed to %q: counted %d times, want 1", edit, tok.calls[edit])
		}
	}
	// An edit to the same text in another string is the same count.
	a.Messages[2].Content = string([]byte("longer text"))
	if n := count(&a, ca, 2); n != len("longer text") {
		t.Errorf("a[2] same text: counted %d", n)
	}
}
