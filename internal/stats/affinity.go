package stats

import (
	"math"
	"slices"
	"strconv"

	"github.com/mtkit/mtkit/internal/record"
)

// Affinity is how well sessions kept their backend, from the records'
// backend field (mtrun --backend-header): a turn moved when its backend
// differs from that of the conversation's turn before it.
type Affinity struct {
	// Backends is the number of distinct backends seen.
	Backends int `json:"backends"`
	// Conversations is the conversations with a backend on two or more
	// requests; Changed is those that moved at least once.
	Conversations int `json:"conversations"`
	Changed       int `json:"conversations_changed"`
	// ChangesPerConversation counts conversations by their number of
	// moves ("0", "1", ...).
	ChangesPerConversation map[string]int `json:"changes_per_conversation"`
	// Turns is the requests after a conversation's first (with a backend
	// on both); Moved is those on another backend than the one before.
	Turns      int `json:"turns"`
	Moved      int `json:"moved"`
	MovedShare Num `json:"moved_share"`
	// Stayed and MovedTurns compare the two kinds of turns.
	Stayed     AffinitySide `json:"stayed"`
	MovedTurns AffinitySide `json:"moved_turns"`
}

// AffinitySide is the TTFT and prefix-cache hit of one kind of turn.
type AffinitySide struct {
	Requests     int `json:"requests"`
	TTFTP50Ms    Num `json:"ttft_p50_ms"`
	TTFTP90Ms    Num `json:"ttft_p90_ms"`
	CacheHitRate Num `json:"cache_hit_rate"`
}

// AffinityAcc accumulates Affinity from requests in each conversation's
// order.
type AffinityAcc struct {
	last     map[convKey]string // backend of the conversation's last request
	changes  map[convKey]int
	backends map[string]struct{}
	sides    [2]affinitySideAcc // stayed, moved
}

type affinitySideAcc struct {
	ttft             []float64
	cached, prompted int64
	requests         int
}

func NewAffinityAcc() *AffinityAcc {
	return &AffinityAcc{last: map[convKey]string{}, changes: map[convKey]int{}, backends: map[string]struct{}{}}
}

// Add accounts one request (retried attempts are not requests).
func (a *AffinityAcc) Add(r *record.Record) {
	if r.Retried || r.Backend == "" {
		return
	}
	a.backends[r.Backend] = struct{}{}
	k := convKey{r.RunID, r.Shard, r.ConversationID}
	prev, seen := a.last[k]
	a.last[k] = r.Backend
	if !seen {
		return
	}
	moved := 0
	if prev != r.Backend {
		moved = 1
	}
	a.changes[k] += moved
	s := &a.sides[moved]
	s.requests++
	if !r.OK() {
		return
	}
	if r.TTFTNs != nil {
		s.ttft = append(s.ttft, Millis(*r.TTFTNs))
	}
	if r.CachedTokens != nil && r.PromptTokens != nil {
		s.cached += *r.CachedTokens
		s.prompted += *r.PromptTokens
	}
}

// Report returns the Affinity, nil when no record has a backend.
func (a *AffinityAcc) Report() *Affinity {
	if len(a.backends) == 0 {
		return nil
	}
	out := &Affinity{Backends: len(a.backends), ChangesPerConversation: map[string]int{}}
	for _, n := range a.changes {
		out.Conversations++
		if n > 0 {
			out.Changed++
		}
		out.ChangesPerConversation[strconv.Itoa(n)]++
	}
	side := func(s *affinitySideAcc) AffinitySide {
		slices.Sort(s.ttft)
		d := AffinitySide{Requests: s.requests, TTFTP50Ms: Num(math.NaN()), TTFTP90Ms: Num(math.NaN()), CacheHitRate: Num(math.NaN())}
		if len(s.ttft) > 0 {
			d.TTFTP50Ms, d.TTFTP90Ms = Num(Quantile(s.ttft, 0.5)), Num(Quantile(s.ttft, 0.9))
		}
		if s.prompted > 0 {
			d.CacheHitRate = Num(float64(s.cached) / float64(s.prompted))
		}
		return d
	}
	out.Stayed, out.MovedTurns = side(&a.sides[0]), side(&a.sides[1])
	out.Turns = a.sides[0].requests + a.sides[1].requests
	out.Moved = a.sides[1].requests
	out.MovedShare = Num(math.NaN())
	if out.Turns > 0 {
		out.MovedShare = Num(float64(out.Moved) / float64(out.Turns))
	}
	return out
}
