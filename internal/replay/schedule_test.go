package replay

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
)

// byClient groups final records by client, in order of intended send
// time.
func byClient(recs []*record.Record) map[int][]*record.Record {
	m := map[int][]*record.Record{}
	for _, r := range recs {
		m[r.Client] = append(m[r.Client], r)
	}
	for _, rs := range m {
		slices.SortFunc(rs, func(a, b *record.Record) int { return a.Scheduled.Compare(b.Scheduled) })
	}
	return m
}

// runStart is the run's start: the earliest intended send time, which
// every schedule here puts at offset 0.
func runStart(recs []*record.Record) time.Time {
	start := recs[0].Scheduled
	for _, r := range recs {
		if r.Scheduled.Before(start) {
			start = r.Scheduled
		}
	}
	return start
}

// TestUserGapTiming replays with user-centric gaps: every turn's intended
// time is its user's slot, computed exactly (the think times of the file
// are not used); a user sends one request at a time and takes sessions
// one after another; a slow answer makes the next turn wait (client
// wait, not lateness) without moving the later slots.
func TestUserGapTiming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		gap        time.Duration
		tokenDelay time.Duration // per word; 3 words an answer
		wantLate   bool          // every turn after a user's first waits for the previous answer
	}{
		{"fast server", 30 * time.Millisecond, 0, false},
		// Each answer takes at least 3 × 15 ms, more than the gap: the
		// next turn's slot comes while the answer streams.
		{"answers longer than the gap", 10 * time.Millisecond, 15 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, func(fs *fakeServer) { fs.tokenDelay = tc.tokenDelay })
			convs := simpleConvs(5, 2)
			for i := range convs {
				for j := range convs[i].Messages {
					convs[i].Messages[j].ThinkTimeMs = 60000 // a minute: must not be used
				}
			}
			const users = 3
			res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: schedule.UserGap{N: users, Gap: tc.gap}}, convs)
			recs := res.final()
			if len(recs) != 10 || res.sum.Finished != 5 {
				t.Fatalf("%d records, summary %+v", len(recs), res.sum)
			}
			// A turn whose slot came while the previous answer streamed
			// waited for it: client wait, not lateness.
			checkClientWait(t, recs)
			start := runStart(recs)
			lanes := byClient(recs)
			if len(lanes) != users {
				t.Fatalf("%d clients in the records, want %d", len(lanes), users)
			}
			for u, rs := range lanes {
				var convsSeen []string
				for k, r := range rs {
					want := start.Add(time.Duration(u)*tc.gap/users + time.Duration(k)*tc.gap)
					if !r.Scheduled.Equal(want) {
						t.Errorf("user %d turn %d scheduled at +%v, want +%v", u, k, r.Scheduled.Sub(start), want.Sub(start))
					}
					if r.Start.Before(r.Scheduled) {
						t.Errorf("user %d turn %d sent %v before its slot", u, k, r.Scheduled.Sub(r.Start))
					}
					if k > 0 {
						if prev := rs[k-1]; r.Start.Before(prev.End) {
							t.Errorf("user %d turn %d sent before its previous answer ended", u, k)
						}
						if tc.wantLate && (r.ClientWaitNs == nil || *r.ClientWaitNs <= 0) {
							t.Errorf("user %d turn %d: client wait %v, want > 0 (answers outlast the gap)", u, k, r.ClientWaitNs)
						}
					}
					if n := len(convsSeen); n == 0 || convsSeen[n-1] != r.ConversationID {
						if slices.Contains(convsSeen, r.ConversationID) {
							t.Errorf("user %d went back to %s: sessions interleaved", u, r.ConversationID)
						}
						convsSeen = append(convsSeen, r.ConversationID)
					}
				}
			}
		})
	}
}

// tracedConv returns a conversation whose user turns carry the given
// trace timestamps (ms).
func tracedConv(id string, stamps ...float64) conv.Conversation {
	c := conv.Conversation{ID: id}
	for k, ts := range stamps {
		c.Messages = append(c.Messages,
			conv.Message{Role: conv.RoleUser, Content: fmt.Sprintf("%s user %d", id, k), TimestampMs: &ts, ThinkTimeMs: 60000},
			conv.Message{Role: conv.RoleAssistant, Content: "ok"})
	}
	return c
}

// TestTraceTiming replays on the trace clock: sessions start at their
// first timestamp relative to the first session's, later turns at their
// own, every time scaled; a turn whose time comes before its previous
// answer ended goes after it, the wait recorded as client wait.
func TestTraceTiming(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, func(fs *fakeServer) { fs.tokenDelay = 10 * time.Millisecond })
	convs := []conv.Conversation{
		tracedConv("a", 5000, 5080),
		tracedConv("b", 5040, 5200),
		tracedConv("c", 5100),
		// The second turn is due 1 ms × 0.5 after the first, whose
		// answer takes at least 30 ms.
		tracedConv("d", 5120, 5121),
	}
	res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: schedule.Trace{Scale: 0.5}}, convs)
	recs := res.final()
	if len(recs) != 7 {
		t.Fatalf("%d records", len(recs))
	}
	start := runStart(recs)
	want := map[string][]time.Duration{
		"a": {0, 40 * time.Millisecond},
		"b": {20 * time.Millisecond, 100 * time.Millisecond},
		"c": {50 * time.Millisecond},
		"d": {60 * time.Millisecond, 60500 * time.Microsecond},
	}
	clients := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}
	for id, rs := range res.byConv() {
		for k, r := range rs {
			if got := r.Scheduled.Sub(start); got != want[id][k] {
				t.Errorf("%s turn %d scheduled at +%v, want +%v", id, k, got, want[id][k])
			}
			if r.Client != clients[id] {
				t.Errorf("%s: client %d, want its session index %d", id, r.Client, clients[id])
			}
			if r.Start.Before(r.Scheduled) {
				t.Errorf("%s turn %d sent %v early", id, k, r.Scheduled.Sub(r.Start))
			}
			if k > 0 && r.Start.Before(rs[k-1].End) {
				t.Errorf("%s turn %d sent before the previous answer ended", id, k)
			}
		}
	}
	checkClientWait(t, recs)
	if d := res.byConv()["d"]; d[1].ClientWaitNs == nil || *d[1].ClientWaitNs <= 0 {
		t.Errorf("d turn 1: client wait %v, want > 0 (due while turn 0 streamed)", d[1].ClientWaitNs)
	}
}

// TestThinkPerSession checks that a session's think-time draws do not
// depend on the other sessions of the run: a lane alternating between
// two sessions draws for each from its own source.
func TestThinkPerSession(t *testing.T) {
	t.Parallel()
	think, err := ParseThink("uniform:1ms:9ms", 0)
	if err != nil {
		t.Fatal(err)
	}
	fs := newFakeServer(t, nil)
	convs := simpleConvs(2, 4)
	planned := func(res *result) []int64 {
		var out []int64
		for _, r := range res.byConv()["c0"] {
			out = append(out, r.ThinkPlannedNs)
		}
		return out
	}
	alone := planned(replayT(t, Options{URL: fs.URL, Stream: true, Think: think, RandSeed: 7}, convs[:1]))
	shared := planned(replayT(t, Options{URL: fs.URL, Stream: true, Think: think, RandSeed: 7, Schedule: schedule.Closed{Sessions: 2}}, convs))
	if !slices.Equal(alone, shared) || len(alone) != 4 {
		t.Errorf("c0's think times: %v alone, %v alternating with c1", alone, shared)
	}
	other := planned(replayT(t, Options{URL: fs.URL, Stream: true, Think: think, RandSeed: 8}, convs[:1]))
	if slices.Equal(alone, other) {
		t.Errorf("seeds 7 and 8 drew the same think times %v", alone)
	}
}
