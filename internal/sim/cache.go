package sim

import (
	"container/list"
	"sync"
)

// prefixCache is an LRU set of token blocks keyed by chained hashes, the
// model of an engine's prefix (KV) cache: a block's key depends on its
// tokens and on every block before it, so a lookup matches the longest
// cached prefix of whole blocks.
type prefixCache struct {
	mu        sync.Mutex
	capBlocks int
	blocks    map[uint64]*list.Element
	lru       list.List // of uint64 keys, front = most recently used
	evictions uint64
}

// newPrefixCache returns a cache of capBlocks blocks; capBlocks <= 0 gives
// a cache that holds nothing.
func newPrefixCache(capBlocks int) *prefixCache {
	return &prefixCache{capBlocks: capBlocks, blocks: make(map[uint64]*list.Element)}
}

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

// match returns how many leading blocks of hs are cached and marks them
// recently used.
func (c *prefixCache) match(hs []uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, h := range hs {
		if _, ok := c.blocks[h]; !ok {
			break
		}
		n++
	}
	c.touchLocked(hs[:n])
	return n
}

// insert adds the blocks hs (a chain from the first block) and evicts the
// least recently used blocks beyond capacity.
func (c *prefixCache) insert(hs []uint64) {
	if c.capBlocks <= 0 || len(hs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(hs) > c.capBlocks {
		hs = hs[:c.capBlocks]
	}
	c.touchLocked(hs)
	for c.lru.Len() > c.capBlocks {
		e := c.lru.Back()
		delete(c.blocks, e.Value.(uint64))
		c.lru.Remove(e)
		c.evictions++
	}
}

// touchLocked makes hs the most recently used blocks, adding missing ones.
// It walks the chain backwards so that the first block ends most recent:
// eviction then takes the tail of a chain before its head, as an engine
// frees a sequence's blocks, and never leaves a chain with a hole.
func (c *prefixCache) touchLocked(hs []uint64) {
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		if e, ok := c.blocks[h]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.blocks[h] = c.lru.PushFront(h)
	}
}

// size returns the number of cached blocks and evictions so far.
func (c *prefixCache) size() (blocks int, evictions uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.evictions
}
