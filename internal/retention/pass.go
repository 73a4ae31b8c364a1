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
// The pass is streaming: Add keeps a few numbers per request (48 bytes, in
// chunks) and a 32-byte segment per conversation (more when conversations
// come back after others), and Result does the work in O(n log n): a sort
// of the segments' hashes that numbers the conversations, a radix sort of
// the out-of-order requests by start merged with the rest, one sweep with
// a heap of the requests in flight and a Fenwick tree over the
// time-ordered touches, and one 48-byte row per profiled later turn.
// docs/mtstats.md ("Cache retention") defines every figure.
package retention

import (
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/mtkit/mtkit/internal/record"
)

// req is what the pass keeps of one successful request: 48 bytes.
type req struct {
	start, end int64 // unix ns
	ttft       int64 // ns; -1 when not recorded
	conv       int32 // the conversation's number (Pass.runs)
	prompt     int32 // prompt tokens (server usage, else the client's count)
	ctx        int32 // prompt + completion tokens: the context after the request
	cached     int32 // server cached_tokens; -1 when not reported
	stage      int32
	first      bool // turn 0
	counted    bool // profiled (measured, passes the filter); else it only touches the cache
}

// Pass accumulates the requests of one or more runs. The zero value is not
// usable; call New.
type Pass struct {
	// runs holds each run's conversations by client and its number.
	runs map[string]*runConvs
	// segs is the provisional conversations that Add numbers requests
	// with, without a lookup in a map of every conversation: a new one
	// each time a client's conversation id is not the one of its last
	// record and the id is not in recent. number merges those of one
	// (run, id) into a conversation.
	segs []segment
	// recent is the last segment of each hash's slot (hash modulo its
	// length), so that conversations that come back after others (a
	// client serving several) seldom make another segment.
	recent []recentSeg
	hash   func(string) uint64
	// nconv is the conversations numbered by number; numbered is how many
	// of the first requests have their conversation's number in conv
	// (the rest have their segment's).
	nconv    int32
	numbered int
	reqs     requests
	later    int // counted requests but first turns: about the rows of the analysis
	// run is the last record's run: records come in runs of one run id.
	run    string
	runCur *runConvs
}

// segment is a provisional conversation: its id (a copy), its run's
// number, and the hash of both.
type segment struct {
	id  string
	h   uint64
	run int32
}

// recentSeg is a slot of Pass.recent: a segment and its hash; seg -1 for
// none.
type recentSeg struct {
	h   uint64
	seg int32
}

// recentSlots is the length of Pass.recent (a power of two).
const recentSlots = 1 << 12

// runConvs is the conversations of one run.
type runConvs struct {
	n int32 // the run's number, from 0 in order of appearance
	// byClient is, by client number, the segment of the client's last
	// record. A client serves one conversation at a time, so most records
	// find theirs here, with no hash and no lookup.
	byClient []clientConv
}

// clientConv is a client's last segment: its id (the segment's copy, so
// that no record's string is kept: a decoder's buffer may hold it) and
// number; seg -1 for none.
type clientConv struct {
	id  string
	seg int32
}

// maxClientCache bounds the client numbers runConvs.byClient holds.
const maxClientCache = 1 << 16

// New returns an empty Pass.
func New() *Pass {
	seed := maphash.MakeSeed()
	p := &Pass{runs: map[string]*runConvs{}, hash: func(s string) uint64 { return maphash.String(seed, s) }, recent: make([]recentSeg, recentSlots)}
	for i := range p.recent {
		p.recent[i].seg = -1
	}
	return p
}

// Add adds one record. counted says whether the request is profiled
// (measured phase, passes the user's filter); every successful request
// touches the cache whether counted or not. Failed attempts and choices
// other than the first are ignored: what a failed attempt left in the
// cache is unknown, and the history continues with choice 0.
func (p *Pass) Add(r *record.Record, counted bool) {
	if !r.OK() || r.Choice != 0 {
		return
	}
	if p.runCur == nil || r.RunID != p.run {
		// Copies (here and of the conversation ids): the record's
		// strings may share memory with much more of the input (a
		// decoder's buffer).
		p.run, p.runCur = strings.Clone(r.RunID), p.runs[r.RunID]
		if p.runCur == nil {
			p.runCur = &runConvs{n: int32(len(p.runs))}
			p.runs[p.run] = p.runCur
		}
	}
	ci := p.conversation(r)
	prompt := tokens(r.PromptTokens, r.ClientPromptTokens)
	completion := tokens(r.CompletionTokens, r.ClientCompletionTokens)
	q := req{
		start: r.Start.UnixNano(), end: r.End.UnixNano(), ttft: -1,
		conv: ci, prompt: clamp32(prompt), ctx: clamp32(prompt + completion),
		cached: -1, stage: int32(r.Stage), first: r.Turn == 0, counted: counted,
	}
	if r.TTFTNs != nil {
		q.ttft = *r.TTFTNs
	}
	if r.CachedTokens != nil {
		q.cached = clamp32(*r.CachedTokens)
	}
	if counted && !q.first {
		p.later++
	}
	p.reqs.add(q)
}

// requests is the requests of a Pass in chunks of chunkLen, so that
// storing millions of them never copies them (a growing slice's copy
// holds the old and the new array at once: 1.5 to 2 times its size).
// Every chunk but the last is full; the first grows as a slice does,
// so that a small input takes little memory.
type requests struct {
	chunks [][]req
	n      int
}

// chunkLen is the requests of a chunk: 3 MB of them.
const (
	chunkBits = 16
	chunkLen  = 1 << chunkBits
)

func (s *requests) add(q req) {
	if s.n&(chunkLen-1) == 0 && s.n > 0 {
		s.chunks = append(s.chunks, make([]req, 0, chunkLen))
	} else if s.n == 0 {
		s.chunks = append(s.chunks, nil)
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, q)
	s.n++
}

// len returns the number of requests.
func (s *requests) len() int { return s.n }

// at returns request i.
func (s *requests) at(i int) *req { return &s.chunks[i>>chunkBits][i&(chunkLen-1)] }

// conversation returns the segment of r's conversation in the current
// run, starting one if r's client had another conversation last and the
// id is not in recent.
func (p *Pass) conversation(r *record.Record) int32 {
	rc, cl := p.runCur, r.Client
	if cl >= 0 && cl < len(rc.byClient) {
		if e := &rc.byClient[cl]; e.seg >= 0 && e.id == r.ConversationID {
			return e.seg
		}
	}
	seg := p.segment(rc, r.ConversationID)
	if cl >= 0 && cl < maxClientCache {
		for len(rc.byClient) <= cl {
			rc.byClient = append(rc.byClient, clientConv{seg: -1})
		}
		rc.byClient[cl] = clientConv{p.segs[seg].id, seg}
	}
	return seg
}

// segment returns the recent segment of the conversation id of rc, or a
// new one.
func (p *Pass) segment(rc *runConvs, id string) int32 {
	h := p.hash(id) ^ uint64(rc.n)*0x9e3779b97f4a7c15
	e := &p.recent[h&(recentSlots-1)]
	if e.seg >= 0 && e.h == h {
		if s := &p.segs[e.seg]; s.run == rc.n && s.id == id {
			return e.seg
		}
	}
	seg := int32(len(p.segs))
	p.segs = append(p.segs, segment{strings.Clone(id), h, rc.n})
	*e = recentSeg{h, seg}
	return seg
}

// number gives every request its conversation's number in place of its
// segment's: the segments of one (run, id) are one conversation, numbered
// in order of first appearance, so that the numbers of earlier calls stay.
// It sorts the segments by hash, rather than look each up in a map as Add
// goes: a sort of a few hundred thousand keys costs less than as many
// lookups in a map that big.
func (p *Pass) number() {
	if p.numbered == p.reqs.len() {
		return
	}
	n := len(p.segs)
	// Keys: the top bits of the hash, then the segment: sorted, the
	// segments of a hash are side by side, in order.
	b := bits.Len(uint(n))
	low := uint64(1)<<b - 1
	keys := make([]uint64, n)
	for s := range p.segs {
		keys[s] = p.segs[s].h&^low | uint64(s)
	}
	slices.Sort(keys)
	// first is each segment's conversation's first segment.
	first := make([]int32, n)
	var reps []int32 // the first segments of one group of keys
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[j]&^low == keys[i]&^low {
			j++
		}
		reps = reps[:0]
		for _, k := range keys[i:j] {
			s := int32(k & low)
			first[s] = s
			for _, t := range reps {
				if a, b := &p.segs[t], &p.segs[s]; a.run == b.run && a.id == b.id {
					first[s] = t
					break
				}
			}
			if first[s] == s {
				reps = append(reps, s)
			}
		}
		i = j
	}
	conv := first // numbered in place: first[t] ≤ s is done by then
	next := int32(0)
	for s := range first {
		if t := first[s]; t == int32(s) {
			conv[s] = next
			next++
		} else {
			conv[s] = conv[t]
		}
	}
	for i := p.numbered; i < p.reqs.len(); i++ {
		r := p.reqs.at(i)
		r.conv = conv[r.conv]
	}
	p.nconv, p.numbered = next, p.reqs.len()
}

// Len returns the number of requests added (successful first choices).
func (p *Pass) Len() int { return p.reqs.len() }

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
