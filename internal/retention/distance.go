package retention

import (
	"cmp"
	"slices"
)

// reuse is the reuse of one later turn: request i came back after prev.
type reuse struct {
	i, prev int32
	tokens  int64 // tokens of other conversations touched since prev (shared prefix once)
	convs   int32 // other conversations touched since prev
}

// fenwick is a binary indexed tree over touch positions 1..n, holding per
// position the tokens and the number of conversations whose latest touch
// it is.
type fenwick struct {
	tok []int64
	n   []int32
}

func newFenwick(n int) *fenwick {
	return &fenwick{tok: make([]int64, n+1), n: make([]int32, n+1)}
}

func (f *fenwick) add(pos int, tok int64, n int32) {
	for ; pos < len(f.tok); pos += pos & -pos {
		f.tok[pos] += tok
		f.n[pos] += n
	}
}

// prefix returns the sums over positions 1..pos.
func (f *fenwick) prefix(pos int) (tok int64, n int32) {
	for ; pos > 0; pos -= pos & -pos {
		tok += f.tok[pos]
		n += f.n[pos]
	}
	return tok, n
}

// timed is a request index with one of its times, for sorting.
type timed struct {
	t int64
	i int32
}

// order returns the request indices sorted by key, ties by index.
func order(reqs []req, key func(*req) int64) []int32 {
	ts := make([]timed, len(reqs))
	for i := range reqs {
		ts[i] = timed{key(&reqs[i]), int32(i)}
	}
	slices.SortFunc(ts, func(a, b timed) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]int32, len(ts))
	for k := range ts {
		out[k] = ts[k].i
	}
	return out
}

// distances computes the reuse of every later turn by one sweep over the
// requests' touches in time order. A request touches the cache twice: at
// its start with its prompt (the engine matches and allocates the prompt's
// blocks) and at its end with its whole context, prompt and completion.
// Each conversation is one item of an LRU stack, at the position of its
// latest touch and weighing its latest context less its shared prefix
// (shared[c]); the shared prefix is one more item, weighing the largest
// shared prefix, at the latest touch of any conversation that has one.
// The reuse distance of a later turn, taken at its start before its own
// touch, is the weight above its conversation's item: the Fenwick tree's
// sum over the later positions. Touches at the same instant as a start
// come before it.
func distances(reqs []req, nconv int, shared []int32) []reuse {
	n := len(reqs)
	byStart := order(reqs, func(r *req) int64 { return r.start })
	byEnd := order(reqs, func(r *req) int64 { return r.end })

	prev := make([]int32, n)
	last := make([]int32, nconv)
	for c := range last {
		last[c] = -1
	}
	for _, i := range byStart {
		c := reqs[i].conv
		prev[i] = last[c]
		last[c] = i
	}
	var sharedTok int32
	for _, s := range shared {
		sharedTok = max(sharedTok, s)
	}

	f := newFenwick(2 * n)
	pos := make([]int32, nconv) // latest touch position, 0 = never touched
	wt := make([]int32, nconv)  // weight at that position
	var sharedPos int32
	var total int64
	var totalN int32
	next := int32(0)
	touch := func(c int32, tokens int32) {
		next++
		w := max(0, tokens-shared[c])
		if p := pos[c]; p > 0 {
			f.add(int(p), -int64(wt[c]), -1)
			total -= int64(wt[c])
			totalN--
		}
		f.add(int(next), int64(w), 1)
		total += int64(w)
		totalN++
		pos[c], wt[c] = next, w
		if shared[c] > 0 {
			if sharedPos > 0 {
				f.add(int(sharedPos), -int64(sharedTok), 0)
				total -= int64(sharedTok)
			}
			f.add(int(next), int64(sharedTok), 0)
			total += int64(sharedTok)
			sharedPos = next
		}
	}

	out := make([]reuse, 0, n)
	j := 0
	for _, i := range byStart {
		r := &reqs[i]
		for ; j < n && reqs[byEnd[j]].end <= r.start; j++ {
			e := &reqs[byEnd[j]]
			touch(e.conv, e.ctx)
		}
		if pv := prev[i]; pv >= 0 && reqs[pv].end <= r.start && pos[r.conv] > 0 {
			tok, cn := f.prefix(int(pos[r.conv]))
			out = append(out, reuse{i: i, prev: pv, tokens: total - tok, convs: totalN - cn})
		}
		touch(r.conv, r.prompt)
	}
	return out
}
