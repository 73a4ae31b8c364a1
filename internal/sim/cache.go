package sim

import (
	"container/list"
	"sync"
)

// prefixCache is the model of an engine's prefix (KV) cache: token blocks
// keyed by chained hashes, so that a block's key depends on its tokens and
// on every block before it and a lookup matches the longest cached prefix
// of whole blocks. It has two tiers, each an LRU: the local tier (GPU
// memory) and an optional offload tier (CPU memory behind a KV connector)
// that receives the blocks the local tier evicts. The tiers are exclusive:
// a block found in the offload tier is loaded back into the local tier and
// leaves the offload tier, so the two together hold up to the sum of their
// capacities.
type prefixCache struct {
	mu      sync.Mutex
	local   lruTier
	offload lruTier
}

// lruTier is one tier of a prefixCache.
type lruTier struct {
	capBlocks int
	blocks    map[uint64]*list.Element
	lru       list.List // of uint64 keys, front = most recently used
	evictions uint64
}

// newPrefixCache returns a cache of capBlocks local blocks and offBlocks
// offload blocks; capBlocks <= 0 gives a cache that holds nothing.
func newPrefixCache(capBlocks, offBlocks int) *prefixCache {
	c := &prefixCache{}
	c.local = lruTier{capBlocks: capBlocks, blocks: make(map[uint64]*list.Element)}
	c.offload = lruTier{capBlocks: offBlocks, blocks: make(map[uint64]*list.Element)}
	return c
}

// enabled reports whether the cache holds anything.
func (c *prefixCache) enabled() bool { return c.local.capBlocks > 0 }

// blockHashes returns the chained hashes of the full blocks of ids.
func blockHashes(ids []int, blockSize int) []uint64 {
	n := len(ids) / blockSize
	hs := make([]uint64, n)
	h := uint64(0x9e3779b97f4a7c15)
	for b := range n {
		for _, t := range ids[b*blockSize : (b+1)*blockSize] {
			h ^= uint64(uint32(t)) + 0x632be59bd9b4e019
			h *= 0x100000001b3
			h ^= h >> 29
		}
		h = mix64(h + uint64(b))
		hs[b] = h
	}
	return hs
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// match returns how many leading blocks of hs are in the local tier and
// how many of the blocks after them are in the offload tier, as vLLM's
// scheduler asks its KV cache manager for the local hit and then the KV
// connector for the tokens after it. The local blocks become the most
// recently used; the offload blocks are loaded into the local tier (which
// may push others out to the offload tier).
func (c *prefixCache) match(hs []uint64) (local, external int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range hs {
		if _, ok := c.local.blocks[h]; !ok {
			break
		}
		local++
	}
	for _, h := range hs[local:] {
		if _, ok := c.offload.blocks[h]; !ok {
			break
		}
		external++
	}
	c.insertLocked(hs[:local+external])
	return local, external
}

// insert adds the blocks hs (a chain from the first block) to the local
// tier; the least recently used blocks beyond its capacity move to the
// offload tier, and those beyond the offload tier's capacity are dropped.
func (c *prefixCache) insert(hs []uint64) {
	if !c.enabled() || len(hs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.insertLocked(hs)
}

func (c *prefixCache) insertLocked(hs []uint64) {
	if len(hs) > c.local.capBlocks {
		hs = hs[:c.local.capBlocks]
	}
	for _, h := range hs {
		c.offload.remove(h)
	}
	c.local.touch(hs)
	evicted := c.local.trim()
	if c.offload.capBlocks <= 0 {
		return
	}
	for _, h := range evicted {
		c.offload.touch([]uint64{h})
		c.offload.trim()
	}
}

// touch makes hs the most recently used blocks, adding missing ones. It
// walks the chain backwards so that the first block ends most recent:
// eviction then takes the tail of a chain before its head, as an engine
// frees a sequence's blocks, and never leaves a chain with a hole.
func (t *lruTier) touch(hs []uint64) {
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		if e, ok := t.blocks[h]; ok {
			t.lru.MoveToFront(e)
			continue
		}
		t.blocks[h] = t.lru.PushFront(h)
	}
}

// trim evicts the least recently used blocks beyond capacity and returns
// them, least recently used first.
func (t *lruTier) trim() []uint64 {
	var out []uint64
	for t.lru.Len() > max(t.capBlocks, 0) {
		e := t.lru.Back()
		h := e.Value.(uint64)
		delete(t.blocks, h)
		t.lru.Remove(e)
		t.evictions++
		out = append(out, h)
	}
	return out
}

// remove takes h out of the tier without counting an eviction.
func (t *lruTier) remove(h uint64) {
	if e, ok := t.blocks[h]; ok {
		delete(t.blocks, h)
		t.lru.Remove(e)
	}
}

// cacheSize is a snapshot of a prefixCache's tiers.
type cacheSize struct {
	blocks, offloadBlocks       int
	evictions, offloadEvictions uint64
}

// size returns the blocks held and evicted so far, per tier.
func (c *prefixCache) size() cacheSize {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cacheSize{c.local.lru.Len(), c.offload.lru.Len(), c.local.evictions, c.offload.evictions}
}
