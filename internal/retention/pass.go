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
	"slices"

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

// Pass accumulates the requests of one or more runs. The zero value is not
// usable; call New.
type Pass struct {
	// runs holds each run's conversations (by run_id, then
	// conversation_id), numbered from 0 across runs.
	runs  map[string]map[string]int32
	nconv int32
	reqs  []req
	// run is the last record's run: records come in runs of one run id.
	run     string
	runConv map[string]int32
}

// New returns an empty Pass.
func New() *Pass { return &Pass{runs: map[string]map[string]int32{}} }

// Add adds one record. counted says whether the request is profiled
// (measured phase, passes the user's filter); every successful request
// touches the cache whether counted or not. Failed attempts and choices
// other than the first are ignored: what a failed attempt left in the
// cache is unknown, and the history continues with choice 0.
func (p *Pass) Add(r *record.Record, counted bool) {
	if !r.OK() || r.Choice != 0 {
		return
	}
	if p.runConv == nil || r.RunID != p.run {
		p.run, p.runConv = r.RunID, p.runs[r.RunID]
		if p.runConv == nil {
			p.runConv = map[string]int32{}
			p.runs[r.RunID] = p.runConv
		}
	}
	ci, ok := p.runConv[r.ConversationID]
	if !ok {
		ci = p.nconv
		p.nconv++
		p.runConv[r.ConversationID] = ci
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
	if len(p.reqs) == cap(p.reqs) {
		// Double, where append grows a large slice by a quarter:
		// fewer copies of what may be millions of requests.
		p.reqs = slices.Grow(p.reqs, max(1024, len(p.reqs)))
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
