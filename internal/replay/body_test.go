package replay

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
)

// TestHistoryBodyAfterDrops replays a conversation whose history the
// context guard trims turn after turn: every request carries the system
// message, the pairs of user message and live answer not dropped (as
// the records count them), then its own user message, so the history's
// cached encoding follows the drops. (No usage is asked for, so the
// guard counts with the client tokenizer alone.)
func TestHistoryBodyAfterDrops(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, nil)
	msgs := []string{"s:terse"}
	const turns = 8
	for k := range turns {
		msgs = append(msgs, fmt.Sprintf("u:user message number %d, padded to some length", k), "a:")
	}
	c := conversation("g", msgs...)
	for i := range c.Messages {
		c.Messages[i].OutputTokens = 4
	}
	res := replayT(t, Options{URL: fs.URL, Stream: true, Tokenizer: fixedCounter{}, MaxModelLen: 200}, []conv.Conversation{c})
	reqs, recs := fs.requests(), res.final()
	if len(reqs) != turns || len(recs) != turns {
		t.Fatalf("%d requests, %d records", len(reqs), len(recs))
	}
	dropped := 0
	for k, req := range reqs {
		r := recs[k]
		if !r.OK() || r.Turn != k {
			t.Fatalf("record %d: turn %d %s %s", k, r.Turn, r.ErrorClass, r.Error)
		}
		kept := k - r.DroppedMessages/2
		want := []conv.Message{{Role: conv.RoleSystem, Content: "terse"}}
		for j := k - kept; j < k; j++ {
			want = append(want, conv.Message{Role: conv.RoleUser, Content: c.Messages[1+2*j].Content},
				conv.Message{Role: conv.RoleAssistant, Content: reqs[j].Answers[0]})
		}
		want = append(want, conv.Message{Role: conv.RoleUser, Content: c.Messages[1+2*k].Content})
		if !slices.EqualFunc(req.Msgs, want, func(a, b conv.Message) bool { return a.Role == b.Role && a.Content == b.Content }) {
			t.Errorf("request %d (%d dropped):\n got %+v\nwant %+v", k, r.DroppedMessages, req.Msgs, want)
		}
		dropped = r.DroppedMessages
	}
	if dropped == 0 {
		t.Fatal("the guard dropped nothing: the test needs a smaller context")
	}
}
