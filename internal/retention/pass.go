// Package retention measures a server's prefix (KV) cache from outside,
// from the request records alone: for every later turn of a conversation,
// how many tokens of other conversations the server touched since the
// conversation's previous request (the LRU stack distance), how long the
// conversation was idle, and how much of its previous context the server
// still had. The share against the distance is the retention profile; where
// it falls below one half is the cache's effective capacity. With the
// server's metrics split into local and external prefix-cache hits, the
// same is given per tier.
//
// The pass is streaming: Add keeps a few numbers per request (56 bytes) and
// Result does the work in O(n log n): two sorts of the requests by time and
// one sweep with a Fenwick tree over the time-ordered touches.
// docs/mtstats.md ("Cache retention") defines every figure.
package retention

import (
	"math"

	"github.com/mtkit/mtkit/internal/record"
)

// req is what the pass keeps of one successful request.
type req struct {
	start, end int64 // unix ns
	ttft       int64 // ns; -1 when not recorded
	conv       int32 // index into Pass.convs
	turn       int32
	prompt     int32 // prompt tokens (server usage, else the client's count)
	ctx        int32 // prompt + completion tokens: the context after the request
	cached     int32 // server cached_tokens; -1 when not reported
	stage      int32
	counted    bool // profiled (measured, passes the filter); else it only touches the cache
}

// convKey identifies a conversation across merged runs.
type convKey struct{ run, conv string }

// Pass accumulates the requests of one or more runs. The zero value is not
// usable; call New.
type Pass struct {
	convs map[convKey]int32
	reqs  []req
	// last caches the previous record's conversation: runs write the
	// turns of a conversation close together, and a hit skips the map.
	last    convKey
	lastIdx int32
}

// New returns an empty Pass.
func New() *Pass { return &Pass{convs: make(map[convKey]int32), lastIdx: -1} }

// Add adds one record. counted says whether the request is profiled
// (measured phase, passes the user's filter); every successful request
// touches the cache whether counted or not. Failed attempts and choices
// other than the first are ignored: what a failed attempt left in the
// cache is unknown, and the history continues with choice 0.
func (p *Pass) Add(r *record.Record, counted bool) {
	if !r.OK() || r.Choice != 0 {
		return
	}
	var ci int32
	if p.lastIdx >= 0 && p.last.conv == r.ConversationID && p.last.run == r.RunID {
		ci = p.lastIdx
	} else {
		k := convKey{r.RunID, r.ConversationID}
		var ok bool
		if ci, ok = p.convs[k]; !ok {
			ci = int32(len(p.convs))
			p.convs[k] = ci
		}
		p.last, p.lastIdx = k, ci
	}
	prompt := tokens(r.PromptTokens, r.ClientPromptTokens)
	completion := tokens(r.CompletionTokens, r.ClientCompletionTokens)
	q := req{
		start: r.Start.UnixNano(), end: r.End.UnixNano(), ttft: -1,
		conv: ci, turn: int32(r.Turn), prompt: clamp32(prompt), ctx: clamp32(prompt + completion),
		cached: -1, stage: int32(r.Stage), counted: counted,
	}
	if r.TTFTNs != nil {
		q.ttft = *r.TTFTNs
	}
	if r.CachedTokens != nil {
		q.cached = clamp32(*r.CachedTokens)
	}
	p.reqs = append(p.reqs, q)
}

// Len returns the number of requests added (successful first choices).
func (p *Pass) Len() int { return len(p.reqs) }

// tokens returns the server's count when it gave one, else the client's.
func tokens(server *int64, client int64) int64 {
	if server != nil {
		return *server
	}
	return client
}

func clamp32(x int64) int32 {
	return int32(max(0, min(x, math.MaxInt32)))
}
