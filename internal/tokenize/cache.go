package tokenize

import (
	"hash/maphash"
	"strings"
	"sync"
)

// pieceCache maps pre-tokenized pieces to their BPE ids. It is bounded
// (each shard is emptied when it fills up, which keeps the frequent pieces
// coming back cheaply) and safe for concurrent use.
type pieceCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

const (
	cacheShards   = 32
	cacheShardMax = 2048 // pieces per shard: 64k pieces in all
	cacheMaxPiece = 64   // longer pieces are not cached
)

// cacheShard is one lock-protected part of a pieceCache.
type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int32
}

func newPieceCache() *pieceCache {
	return &pieceCache{seed: maphash.MakeSeed()}
}

func (c *pieceCache) shard(piece string) *cacheShard {
	return &c.shards[maphash.String(c.seed, piece)%cacheShards]
}

// get returns the cached ids of piece.
func (c *pieceCache) get(piece string) ([]int32, bool) {
	if len(piece) > cacheMaxPiece {
		return nil, false
	}
	s := c.shard(piece)
	s.mu.RLock()
	ids, ok := s.m[piece]
	s.mu.RUnlock()
	return ids, ok
}

// put stores the ids of piece; ids must not be modified afterwards.
func (c *pieceCache) put(piece string, ids []int32) {
	if len(piece) > cacheMaxPiece {
		return
	}
	s := c.shard(piece)
	s.mu.Lock()
	if s.m == nil || len(s.m) >= cacheShardMax {
		s.m = make(map[string][]int32, cacheShardMax/4)
	}
	// Clone: piece points into the caller's text.
	s.m[strings.Clone(piece)] = ids
	s.mu.Unlock()
}
