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
// chunks) and one map entry per conversation, and Result does the work in
// O(n log n): a radix sort of the requests by start (none when they came in
// that order), one sweep with a heap of the requests in flight and a
// Fenwick tree over the time-ordered touches, and one 48-byte row per
// profiled later turn.
// docs/mtstats.md ("Cache retention") defines every figure.
package retention

import (
	"hash/maphash"
	"math"
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
	// runs holds each run's conversations, numbered from 0 across runs.
	runs  map[string]*runConvs
	nconv int32 // conversations numbered
	// ids is each conversation's id, by number; hash hashes an id.
	ids   []string
	hash  func(string) uint64
	reqs  requests
	later int // counted requests but first turns: about the rows of the analysis
	// run is the last record's run: records come in runs of one run id.
	run    string
	runCur *runConvs
}

// runConvs is the conversations of one run.
type runConvs struct {
	// byHash is the number of the first conversation whose id has the
	// hash: a map of 12-byte entries, cheaper to probe and grow than one
	// of strings. byID holds the conversations whose hash an earlier
	// one took (nil until one does).
	byHash map[uint64]int32
	byID   map[string]int32
	// byClient is, by client number, the conversation of the client's
	// last record. A client serves one conversation at a time, so most
	// records find theirs here, with no map lookup.
	byClient []clientConv
}

// clientConv is a client's last conversation: its id as the record gave it
// (a decoder's dictionary entry, which the next records of the
// conversation share: comparing them costs nothing) and its number; ci
// -1 for none.
type clientConv struct {
	id string
	ci int32
}

// maxClientCache bounds the client numbers runConvs.byClient holds.
const maxClientCache = 1 << 16

// New returns an empty Pass.
func New() *Pass {
	seed := maphash.MakeSeed()
	return &Pass{runs: map[string]*runConvs{}, hash: func(s string) uint64 { return maphash.String(seed, s) }}
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
			p.runCur = &runConvs{byHash: map[uint64]int32{}}
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

// conversation returns the number of r's conversation in the current run,
// numbering it if it is new.
func (p *Pass) conversation(r *record.Record) int32 {
	rc, cl := p.runCur, r.Client
	if cl >= 0 && cl < len(rc.byClient) {
		if e := &rc.byClient[cl]; e.ci >= 0 && e.id == r.ConversationID {
			return e.ci
		}
	}
	ci := p.lookup(rc, r.ConversationID)
	if cl >= 0 && cl < maxClientCache {
		for len(rc.byClient) <= cl {
			rc.byClient = append(rc.byClient, clientConv{ci: -1})
		}
		rc.byClient[cl] = clientConv{r.ConversationID, ci}
	}
	return ci
}

// lookup returns the number of the conversation id of rc, numbering it
// if it is new.
func (p *Pass) lookup(rc *runConvs, id string) int32 {
	h := p.hash(id)
	ci, ok := rc.byHash[h]
	if ok && p.ids[ci] == id {
		return ci
	}
	if ok { // another id has the hash
		if ci, ok := rc.byID[id]; ok {
			return ci
		}
	}
	ci = p.nconv
	p.nconv++
	id = strings.Clone(id)
	p.ids = append(p.ids, id)
	if !ok {
		rc.byHash[h] = ci
	} else {
		if rc.byID == nil {
			rc.byID = map[string]int32{}
		}
		rc.byID[id] = ci
	}
	return ci
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
