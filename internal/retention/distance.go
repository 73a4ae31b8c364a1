package retention

import (
	"iter"
	"math"
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
// it is; the two sums of a node side by side, so that a walk touches one
// cache line per node.
type fenwick []fenNode

type fenNode struct {
	tok int64
	n   int64
}

func newFenwick(n int) fenwick { return make(fenwick, n+1) }

func (f fenwick) add(pos int, tok int64, n int64) {
	for ; pos < len(f); pos += pos & -pos {
		f[pos].tok += tok
		f[pos].n += n
	}
}

// prefix returns the sums over positions 1..pos.
func (f fenwick) prefix(pos int) (tok int64, n int64) {
	for ; pos > 0; pos -= pos & -pos {
		tok += f[pos].tok
		n += f[pos].n
	}
	return tok, n
}

// timed is a request index with one of its times.
type timed struct {
	t int64
	i int32
}

// order returns the request indices sorted by key, ties by index.
// Records come nearly in order of start (mtbench writes them in order of
// schedule): most requests have no smaller key after them and are in
// order already. order sorts only the others, the out-of-order ones, and
// merges the two, unless they are more than maxOutOfOrder of the requests
// (mtrun writes records as requests end: a long request puts every request
// that started during it out of order); then it sorts them all.
func order(reqs *requests, key func(*req) int64) []int32 {
	n := reqs.len()
	// From the end: a request is out of order when a later one has a
	// smaller key.
	in := make([]bool, n)
	var out []int32
	least := int64(math.MaxInt64)
	for i := n - 1; i >= 0; i-- {
		if k := key(reqs.at(i)); k > least {
			out = append(out, int32(i))
			if len(out) > n/maxOutOfOrder {
				return sortByKey(reqs, key, nil)
			}
		} else {
			least, in[i] = k, true
		}
	}
	if len(out) == 0 {
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		return idx
	}
	slices.Reverse(out)
	out = sortByKey(reqs, key, out)
	// Merge: both in order of key, ties by index.
	idx := make([]int32, 0, n)
	i := 0
	for _, o := range out {
		ko := key(reqs.at(int(o)))
		for ; i < n; i++ {
			if !in[i] {
				continue
			}
			if k := key(reqs.at(i)); k > ko || k == ko && int32(i) > o {
				break
			}
			idx = append(idx, int32(i))
		}
		idx = append(idx, o)
	}
	for ; i < n; i++ {
		if in[i] {
			idx = append(idx, int32(i))
		}
	}
	return idx
}

// maxOutOfOrder is the inverse of the share of out-of-order requests past
// which order sorts them all.
const maxOutOfOrder = 4

// sortByKey returns the request indices idx (nil: all, in order) sorted by
// key, ties in their order in idx: an LSD radix sort of the keys less
// their minimum, 11 bits a pass, as many passes as the span of the keys
// needs (4 for a run of an hour in ns).
func sortByKey(reqs *requests, key func(*req) int64, idx []int32) []int32 {
	if idx == nil {
		idx = make([]int32, reqs.len())
		for i := range idx {
			idx[i] = int32(i)
		}
	}
	n := len(idx)
	keys := make([]uint64, n)
	lo := int64(math.MaxInt64)
	for _, i := range idx {
		lo = min(lo, key(reqs.at(int(i))))
	}
	var span uint64
	for k, i := range idx {
		keys[k] = uint64(key(reqs.at(int(i))) - lo)
		span = max(span, keys[k])
	}
	const bits, mask = 11, 1<<11 - 1
	tk, ti := make([]uint64, n), make([]int32, n)
	for shift := 0; shift < 64 && span>>shift != 0; shift += bits {
		var count [mask + 2]int
		for _, k := range keys {
			count[(k>>shift)&mask+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for i, k := range keys {
			d := (k >> shift) & mask
			tk[count[d]], ti[count[d]] = k, idx[i]
			count[d]++
		}
		keys, tk, idx, ti = tk, keys, ti, idx
	}
	return idx
}

// distances computes the reuse of every later turn by one sweep over the
// requests' starts and ends in time order (the starts sorted, the ends
// from a heap of the requests in flight). Each conversation is one item
// of an LRU stack: at the position of its latest end, weighing the context
// it left (prompt and completion) less its shared prefix (shared[c]), or,
// while one of its requests runs, in flight, weighing that prompt less the
// shared prefix. An engine cannot evict the blocks of a running request
// and frees them, most recent first, when it ends, so a request in flight
// counts as touched at every instant. The shared prefix is one more item,
// weighing the largest shared prefix, touched with any conversation that
// has one. The reuse distance of a later turn, taken at its start before
// it goes in flight, is the weight touched since its conversation's latest
// end: the Fenwick tree's sum over the later positions, plus everything in
// flight. Ends at the same instant as a start come before it. The reuses
// come in order of start; none is kept.
func distances(reqs *requests, nconv int, shared []int32) iter.Seq[reuse] {
	return func(yield func(reuse) bool) {
		sweep(reqs, nconv, shared, yield)
	}
}

// sweep is distances: it yields each reuse until yield returns false.
func sweep(reqs *requests, nconv int, shared []int32, yield func(reuse) bool) {
	n := reqs.len()
	// Records read in order of start (a sorted file) need no sort.
	var byStart []int32
	for i := 1; i < n; i++ {
		if reqs.at(i).start < reqs.at(i-1).start {
			byStart = order(reqs, func(r *req) int64 { return r.start })
			break
		}
	}

	last := make([]int32, nconv) // the latest request to start, -1 = none
	for c := range last {
		last[c] = -1
	}
	var sharedTok int64
	for _, s := range shared {
		sharedTok = max(sharedTok, int64(s))
	}

	f := newFenwick(n)
	pos := make([]int32, nconv)     // position of the latest end, 0 = none or in flight
	wt := make([]int32, nconv)      // weight at that position
	running := make([]int32, nconv) // requests in flight
	var total, flying int64         // weight in the tree, weight in flight
	var totalN, flyingN int32
	var sharedPos, sharedFlying int32
	next := int32(0)
	leave := func(c int32) { // c's item leaves its position
		if p := pos[c]; p > 0 {
			f.add(int(p), -int64(wt[c]), -1)
			total -= int64(wt[c])
			totalN--
			pos[c] = 0
		}
	}

	var ends endHeap // the requests in flight, by end
	for k := range n {
		i := int32(k)
		if byStart != nil {
			i = byStart[k]
		}
		r := reqs.at(int(i))
		for len(ends) > 0 && ends[0].t <= r.start {
			e := reqs.at(int(ends.pop().i))
			c := e.conv
			running[c]--
			flying -= int64(max(0, e.prompt-shared[c]))
			if running[c] == 0 {
				flyingN--
			}
			if shared[c] > 0 {
				sharedFlying--
			}
			leave(c)
			next++
			w := max(0, e.ctx-shared[c])
			f.add(int(next), int64(w), 1)
			total += int64(w)
			totalN++
			pos[c], wt[c] = next, w
			if shared[c] > 0 {
				sharedPos = next
			}
		}
		c := r.conv
		pv := last[c] // the conversation's previous request
		last[c] = i
		if pv >= 0 && reqs.at(int(pv)).end <= r.start && pos[c] > 0 && running[c] == 0 {
			tok, cn := f.prefix(int(pos[c]))
			u := reuse{i: i, prev: pv, tokens: total - tok + flying, convs: totalN - int32(cn) + flyingN}
			if sharedPos > pos[c] || sharedFlying > 0 {
				u.tokens += sharedTok
			}
			if !yield(u) {
				return
			}
		}
		leave(c)
		if running[c] == 0 {
			flyingN++
		}
		running[c]++
		flying += int64(max(0, r.prompt-shared[c]))
		if shared[c] > 0 {
			sharedFlying++
		}
		ends.push(timed{r.end, i})
	}
}

// endHeap is a min-heap of requests by end time (ties by index).
type endHeap []timed

func less(a, b timed) bool { return a.t < b.t || a.t == b.t && a.i < b.i }

func (h *endHeap) push(x timed) {
	*h = append(*h, x)
	s := *h
	for k := len(s) - 1; k > 0; {
		p := (k - 1) / 2
		if !less(s[k], s[p]) {
			break
		}
		s[k], s[p] = s[p], s[k]
		k = p
	}
}

func (h *endHeap) pop() timed {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for k := 0; ; {
		m, l, r := k, 2*k+1, 2*k+2
		if l < n && less(s[l], s[m]) {
			m = l
		}
		if r < n && less(s[r], s[m]) {
			m = r
		}
		if m == k {
			break
		}
		s[k], s[m] = s[m], s[k]
		k = m
	}
	*h = s
	return top
}
