package tokenize

import (
	"math/bits"
	"sync"
)

// mergeRule is the result of merging a pair of tokens: the merge's rank
// (its line in merges; lower merges first) and the merged token's id.
type mergeRule struct{ rank, id int32 }

// pairKey packs two token ids into a merges key.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// mergeTable maps pairs of token ids to their merges compactly: the pair
// and merged id of each merge in rank order, and an open-addressing index
// of the pairs. A merge's rank is its position in the table, which orders
// merges as their lines in the file do. For Qwen3's 151k merges it keeps
// 2.8 MB, against 4.2 MB for a map[uint64]mergeRule.
type mergeTable struct {
	slots []uint32 // 8 bits of the pair's hash above the merge's index+1; 0: empty
	pairs []uint64 // pairKey of each merge
	ids   []int32  // merged token of each merge
	shift uint     // a pair's first slot is its hash's top bits
}

// newMergeTable returns a table for at most n merges (n < maxTableID).
func newMergeTable(n int) *mergeTable {
	size := max(8, 1<<bits.Len(uint(n+n/3))) // at most 3/4 full
	return &mergeTable{
		slots: make([]uint32, size),
		pairs: make([]uint64, 0, n),
		ids:   make([]int32, 0, n),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
	}
}

// hashPair spreads a pair key over 64 bits (Fibonacci hashing).
func hashPair(k uint64) uint64 { return k * 0x9E3779B97F4A7C15 }

// add appends the merge of pair k into id, ranked after every merge added
// before, unless k already has one.
func (m *mergeTable) add(k uint64, id int32) {
	h := hashPair(k)
	tag := uint32(h>>16) << 24
	mask := uint64(len(m.slots) - 1)
	i := h >> m.shift
	for ; m.slots[i] != 0; i = (i + 1) & mask {
		if m.slots[i]&^maxTableID == tag && m.pairs[m.slots[i]&maxTableID-1] == k {
			return
		}
	}
	m.pairs = append(m.pairs, k)
	m.ids = append(m.ids, id)
	m.slots[i] = tag | uint32(len(m.pairs))
}

// get returns the merge of pair k.
func (m *mergeTable) get(k uint64) (mergeRule, bool) {
	h := hashPair(k)
	tag := uint32(h>>16) << 24
	mask := uint64(len(m.slots) - 1)
	for i := h >> m.shift; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			return mergeRule{}, false
		}
		if s&^maxTableID == tag {
			if j := s&maxTableID - 1; m.pairs[j] == k {
				return mergeRule{rank: int32(j), id: m.ids[j]}, true
			}
		}
	}
}

// len returns the number of merges.
func (m *mergeTable) len() int { return len(m.pairs) }

// smallPiece is the symbol count up to which merge uses the quadratic
// in-place algorithm; longer pieces use a heap.
const smallPiece = 96

// merge applies the BPE merges to syms (token ids, one per byte), lowest
// rank first and leftmost among equal ranks, and returns the final ids.
// syms is overwritten.
func merge(merges *mergeTable, syms []int32) []int32 {
	if len(syms) < 2 {
		return syms
	}
	if len(syms) > smallPiece {
		return mergeHeap(merges, syms)
	}
	return mergeSmall(merges, syms)
}

const noRank = int32(1<<31 - 1)

// mergeSmall is merge for short pieces: a rank per adjacent pair, a linear
// scan for the minimum, in-place removal.
func mergeSmall(merges *mergeTable, syms []int32) []int32 {
	if len(syms) < 2 || len(syms) > smallPiece {
		return mergeHeap(merges, syms)
	}
	var rbuf [smallPiece]int32
	var ibuf [smallPiece]int32
	ranks := rbuf[:len(syms)-1]
	ids := ibuf[:len(syms)-1]
	pair := func(i int) {
		if r, ok := merges.get(pairKey(syms[i], syms[i+1])); ok {
			ranks[i], ids[i] = r.rank, r.id
		} else {
			ranks[i] = noRank
		}
	}
	for i := range ranks {
		pair(i)
	}
	for len(ranks) > 0 {
		best, at := noRank, -1
		for i, r := range ranks {
			if r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] = ids[at]
		copy(syms[at+1:], syms[at+2:])
		syms = syms[:len(syms)-1]
		copy(ranks[at:], ranks[at+1:])
		copy(ids[at:], ids[at+1:])
		ranks = ranks[:len(ranks)-1]
		ids = ids[:len(ids)-1]
		if at < len(ranks) {
			pair(at)
		}
		if at > 0 {
			pair(at - 1)
		}
	}
	return syms
}

// mergeCand is a candidate merge of the symbol at pos with its successor.
type mergeCand struct {
	rank, pos   int32
	left, right int32 // ids the pair had when pushed (to spot stale entries)
	id          int32
}

// key orders candidates by rank, then by position (leftmost first).
func (c *mergeCand) key() uint64 { return uint64(uint32(c.rank))<<32 | uint64(uint32(c.pos)) }

// mergeHeap is merge for long pieces: a doubly linked list of symbols and
// a heap of candidate pairs, O(n log n).
func mergeHeap(merges *mergeTable, syms []int32) []int32 {
	n := len(syms)
	if n < 2 {
		return syms
	}
	sc := scratchPool.Get().(*mergeScratch)
	defer scratchPool.Put(sc)
	next, prev, alive := sc.links(n)
	for i := range syms {
		prev[i], next[i], alive[i] = int32(i-1), int32(i+1), true
	}
	next[n-1] = -1
	h := sc.cands[:0]
	defer func() { sc.cands = h[:0] }()
	push := func(i int32) {
		j := next[i]
		if i < 0 || j < 0 {
			return
		}
		if r, ok := merges.get(pairKey(syms[i], syms[j])); ok {
			h = append(h, mergeCand{rank: r.rank, pos: i, left: syms[i], right: syms[j], id: r.id})
		}
	}
	for i := 0; i < n-1; i++ {
		push(int32(i))
	}
	heapInit[mergeCand](h)
	var c mergeCand
	for len(h) > 0 {
		h = heapPop[mergeCand](h, &c)
		i := c.pos
		j := next[i]
		if !alive[i] || j < 0 || syms[i] != c.left || syms[j] != c.right {
			continue
		}
		syms[i] = c.id
		alive[j] = false
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		if p := prev[i]; p >= 0 {
			if r, ok := merges.get(pairKey(syms[p], syms[i])); ok {
				h = heapPush(h, mergeCand{rank: r.rank, pos: p, left: syms[p], right: syms[i], id: r.id})
			}
		}
		if k := next[i]; k >= 0 {
			if r, ok := merges.get(pairKey(syms[i], syms[k])); ok {
				h = heapPush(h, mergeCand{rank: r.rank, pos: i, left: syms[i], right: syms[k], id: r.id})
			}
		}
	}
	out := syms[:0]
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

// mergeRanks is tiktoken's BPE over the bytes of piece, whose single-byte
// token ids are syms (overwritten): the adjacent pair of parts whose
// concatenation is the token of lowest rank (its id in ranks) merges
// first, leftmost among equal ranks, until no concatenation is a token.
// It returns the ids of the final parts. Unlike merge, it needs no merge
// list: any two adjacent parts whose bytes together form a token merge.
func mergeRanks(ranks *tokenTable, piece string, syms []int32) []int32 {
	if len(syms) < 2 {
		return syms
	}
	if len(syms) > smallPiece {
		return mergeRanksHeap(ranks, piece, syms)
	}
	return mergeRanksSmall(ranks, piece, syms)
}

// mergeRanksSmall is mergeRanks for short pieces: part boundaries and a
// rank per adjacent pair in arrays, a linear scan for the minimum.
func mergeRanksSmall(ranks *tokenTable, piece string, syms []int32) []int32 {
	n := len(syms)
	if n < 2 || n > smallPiece || n != len(piece) {
		return mergeRanksHeap(ranks, piece, syms)
	}
	var bbuf [smallPiece + 1]int32
	var rbuf [smallPiece]int32
	bounds := bbuf[:n+1] // part i is piece[bounds[i]:bounds[i+1]]
	for i := range bounds {
		bounds[i] = int32(i)
	}
	pr := rbuf[:n-1] // pr[i]: rank of parts i and i+1 merged
	rank := func(i int) int32 {
		if r, ok := ranks.lookup(piece[bounds[i]:bounds[i+2]]); ok {
			return r
		}
		return noRank
	}
	for i := range pr {
		pr[i] = rank(i)
	}
	for len(pr) > 0 {
		best, at := noRank, -1
		for i, r := range pr {
			if r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] = best
		copy(syms[at+1:], syms[at+2:])
		syms = syms[:len(syms)-1]
		copy(bounds[at+1:], bounds[at+2:])
		bounds = bounds[:len(bounds)-1]
		copy(pr[at:], pr[at+1:])
		pr = pr[:len(pr)-1]
		if at < len(pr) {
			pr[at] = rank(at)
		}
		if at > 0 {
			pr[at-1] = rank(at - 1)
		}
	}
	return syms
}

// rankCand is a candidate merge of the part starting at byte pos with the
// next one, whose bytes were piece[pos:end] when it was pushed.
type rankCand struct{ rank, pos, end int32 }

// key orders candidates by rank, then by position (leftmost first).
func (c *rankCand) key() uint64 { return uint64(uint32(c.rank))<<32 | uint64(uint32(c.pos)) }

// keyed is a heap element: a merge candidate ordered by key.
type keyed[T any] interface {
	*T
	key() uint64
}

// heapPush adds c to the min-heap h. Unlike container/heap it does not box
// each element into an interface (an allocation per push).
func heapPush[T any, P keyed[T]](h []T, c T) []T {
	h = append(h, c)
	j := len(h) - 1
	for j > 0 {
		i := (j - 1) / 2
		if P(&h[i]).key() <= P(&h[j]).key() {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
	return h
}

// heapPop removes the least element of the min-heap h into *out.
func heapPop[T any, P keyed[T]](h []T, out *T) []T {
	n := len(h) - 1
	*out = h[0]
	h[0] = h[n]
	h = h[:n]
	heapDown[T, P](h, 0)
	return h
}

// heapDown moves h[i] down to its place.
func heapDown[T any, P keyed[T]](h []T, i int) {
	n := len(h)
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if j+1 < n && P(&h[j+1]).key() < P(&h[j]).key() {
			j++
		}
		if P(&h[i]).key() <= P(&h[j]).key() {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// heapInit orders h as a min-heap.
func heapInit[T any, P keyed[T]](h []T) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		heapDown[T, P](h, i)
	}
}

// mergeScratch holds the working arrays of mergeHeap and mergeRanksHeap,
// reused across calls through scratchPool: long pieces then cost no
// allocation beyond their first.
type mergeScratch struct {
	next, prev []int32
	alive      []bool
	cands      []mergeCand
	ranks      []rankCand
}

var scratchPool = sync.Pool{New: func() any { return new(mergeScratch) }}

// links returns next, prev and alive arrays of n elements.
func (s *mergeScratch) links(n int) (next, prev []int32, alive []bool) {
	if cap(s.next) < n {
		s.next, s.prev, s.alive = make([]int32, n), make([]int32, n), make([]bool, n)
	}
	return s.next[:n], s.prev[:n], s.alive[:n]
}

// mergeRanksHeap is mergeRanks for long pieces, O(n log n): parts are a
// linked list indexed by their first byte, candidates a heap; a candidate
// is stale when its parts changed since it was pushed.
func mergeRanksHeap(ranks *tokenTable, piece string, syms []int32) []int32 {
	n := len(syms)
	if n < 2 || n != len(piece) {
		return syms
	}
	// next[i] is the start of the part after the one starting at i (n for
	// the last), prev[i] that of the part before (-1 for the first);
	// alive[i] reports whether a part starts at i.
	sc := scratchPool.Get().(*mergeScratch)
	defer scratchPool.Put(sc)
	next, prev, alive := sc.links(n)
	for i := range n {
		next[i], prev[i], alive[i] = int32(i+1), int32(i-1), true
	}
	end := func(i int32) int32 { // end of the part after the one at i
		if j := next[i]; j < int32(n) {
			return next[j]
		}
		return -1
	}
	h := sc.ranks[:0]
	defer func() { sc.ranks = h[:0] }()
	cand := func(i int32) (rankCand, bool) {
		e := end(i)
		if e < 0 {
			return rankCand{}, false
		}
		r, ok := ranks.lookup(piece[i:e])
		return rankCand{rank: r, pos: i, end: e}, ok
	}
	for i := range int32(n - 1) {
		if c, ok := cand(i); ok {
			h = append(h, c)
		}
	}
	heapInit[rankCand](h)
	var c rankCand
	for len(h) > 0 {
		h = heapPop[rankCand](h, &c)
		i := c.pos
		if !alive[i] || end(i) != c.end {
			continue
		}
		j := next[i]
		syms[i] = c.rank
		alive[j] = false
		next[i] = next[j]
		if next[i] < int32(n) {
			prev[next[i]] = i
		}
		if p := prev[i]; p >= 0 {
			if c, ok := cand(p); ok {
				h = heapPush(h, c)
			}
		}
		if c, ok := cand(i); ok {
			h = heapPush(h, c)
		}
	}
	out := syms[:0]
	for i := int32(0); i < int32(n); i = next[i] {
		out = append(out, syms[i])
	}
	return out
}
