package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/retention"
	"github.com/mtkit/mtkit/internal/slowtest"
)

// retentionConvs renders n conversations of turns user turns: each user
// message is the conversation's id and words random words (the id first,
// so that no two conversations share a cache block), each answer asks for
// out tokens.
func retentionConvs(n, turns, words, out int) string {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(turns)))
	vocab := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	var b strings.Builder
	w := conv.NewWriter(&b)
	for i := range n {
		c := conv.Conversation{ID: "c" + strconv.Itoa(i)}
		for k := range turns {
			var m strings.Builder
			fmt.Fprintf(&m, "conversation %d turn %d:", i, k)
			for range words {
				m.WriteString(" " + vocab[rng.IntN(len(vocab))])
			}
			c.Messages = append(c.Messages,
				conv.Message{Role: conv.RoleUser, Content: m.String()},
				conv.Message{Role: conv.RoleAssistant, Content: "answer", OutputTokens: out})
		}
		w.Write(&c)
	}
	return b.String()
}

// TestRetentionCapacity is issue 22's simulator check: against the
// simulator's LRU prefix cache (block=16, zero timing), with random
// conversation sampling over more active conversations than the cache
// holds, the effective capacity found from the records is within 10 %
// of the configured size. One client makes the run deterministic: the
// order of the requests depends only on --seed. The 150,000-token case
// runs in the slow step (slowtest).
func TestRetentionCapacity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cache, convs, active int
	}{
		{40000, 200, 60},
		{150000, 480, 200},
	} {
		t.Run(strconv.Itoa(tc.cache), func(t *testing.T) {
			if tc.cache > 40000 {
				// 2,880 requests: minutes under -race on a loaded
				// machine (5 min 49 s once, near go test's 10-minute limit).
				slowtest.Skip(t)
			}
			t.Parallel()
			got := runMtrun(t, retentionConvs(tc.convs, 6, 150, 100), nil, "--sim",
				"--sim-config", fmt.Sprintf("preset=zero,cache=%d,block=16", tc.cache),
				"--clients", "1", "--active", strconv.Itoa(tc.active), "--conversation-sampling", "random",
				"--seed", "1", "--tokenizer", "none", "--quiet")
			if got.code != 0 {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			p := retention.New()
			for _, r := range readRecords(t, got.stdoutBytes, "stdout") {
				p.Add(&r, r.Measured())
			}
			res := p.Result(retention.Options{})
			if res.Basis != retention.BasisCachedTokens || res.CapacityTokens == nil {
				t.Fatalf("basis %q, capacity_tokens %v (%s)", res.Basis, res.CapacityTokens, res.Note)
			}
			if e := math.Abs(*res.CapacityTokens-float64(tc.cache)) / float64(tc.cache); e > 0.10 {
				t.Errorf("capacity_tokens %.0f, configured %d: %.1f %% off", *res.CapacityTokens, tc.cache, 100*e)
			}
			t.Logf("cache=%d: capacity_tokens %.0f, capacity_conversations %v, %d later turns", tc.cache, *res.CapacityTokens, *res.CapacityConversations, res.Requests)
		})
	}
}
