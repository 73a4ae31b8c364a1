package tokenize

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"strings"
)

// tokenTable is a vocabulary held compactly: the text of every id in one
// byte arena, and an open-addressing index from a token's bytes to its id.
// For Qwen3's 151k tokens it takes about 4 MB, against 12 MB for a
// map[string]int32 plus a []string.
type tokenTable struct {
	arena []byte
	off   []uint32 // text of id i is arena[off[i]:off[i+1]]
	// slots holds, for each used slot, the top 8 bits of the key's hash
	// above id+1 (so a used slot is never 0); ids are below maxTableID.
	slots []uint32
	seed  maphash.Seed
	// extra holds the keys that are not the text of their id (an id with
	// several keys, or whose text is an added token's content).
	extra map[string]int32
}

// maxTableID bounds the ids of a tokenTable (24 bits).
const maxTableID = 1<<24 - 1

// tableBuilder collects a tokenTable's texts and keys in any order.
type tableBuilder struct {
	texts []tableText
	keys  []tableKey
	data  []byte // the bytes of texts and keys
}

type tableText struct {
	id       int32
	off, end uint32 // in data
}

type tableKey struct {
	id       int32
	off, end uint32
}

// text sets the text of id; a later call for the same id replaces it.
func (b *tableBuilder) text(id int32, s []byte) {
	off := uint32(len(b.data))
	b.data = append(b.data, s...)
	b.texts = append(b.texts, tableText{id, off, uint32(len(b.data))})
}

// both sets the text of id to s and makes s look up id.
func (b *tableBuilder) both(id int32, s []byte) {
	off := uint32(len(b.data))
	b.data = append(b.data, s...)
	b.texts = append(b.texts, tableText{id, off, uint32(len(b.data))})
	b.keys = append(b.keys, tableKey{id, off, uint32(len(b.data))})
}

// build returns the table of ids 0..maxID; ids with no text have "". Two
// keys with the same bytes are an error.
func (b *tableBuilder) build(maxID int32) (*tokenTable, error) {
	if maxID >= maxTableID {
		return nil, fmt.Errorf("id %d too large", maxID)
	}
	if len(b.data) >= 1<<32-1 {
		return nil, fmt.Errorf("vocabulary of %d bytes is too large", len(b.data))
	}
	last := make([]int32, maxID+1) // index+1 into texts of each id's text
	for i, t := range b.texts {
		last[t.id] = int32(i + 1)
	}
	t := &tokenTable{off: make([]uint32, maxID+2), seed: maphash.MakeSeed()}
	n := 0
	for _, i := range last {
		if i > 0 {
			tt := b.texts[i-1]
			n += int(tt.end - tt.off)
		}
	}
	t.arena = make([]byte, 0, n)
	for id, i := range last {
		t.off[id] = uint32(len(t.arena))
		if i > 0 {
			tt := b.texts[i-1]
			t.arena = append(t.arena, b.data[tt.off:tt.end]...)
		}
	}
	t.off[maxID+1] = uint32(len(t.arena))
	// At most 3/4 full.
	t.slots = make([]uint32, max(8, 1<<bits.Len(uint(len(b.keys)+len(b.keys)/3))))
	// One string of all the bytes, so that each key is a substring of
	// it and not an allocation of its own.
	all := string(b.data)
	for _, k := range b.keys {
		key := all[k.off:k.end]
		if _, dup := t.lookup(key); dup {
			return nil, fmt.Errorf("token %q: duplicate", key)
		}
		if string(t.text(k.id)) != key {
			if t.extra == nil {
				t.extra = map[string]int32{}
			}
			t.extra[strings.Clone(key)] = k.id // not all of all kept
			continue
		}
		h := maphash.String(t.seed, key)
		mask := uint64(len(t.slots) - 1)
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = uint32(h>>56)<<24 | uint32(k.id+1)
	}
	return t, nil
}

// size returns the number of ids.
func (t *tokenTable) size() int { return len(t.off) - 1 }

// text returns the text of id, which must be in range; the result must
// not be modified.
func (t *tokenTable) text(id int32) []byte {
	return t.arena[t.off[id]:t.off[id+1]]
}

// lookup returns the id key stands for.
func (t *tokenTable) lookup(key string) (int32, bool) {
	h := maphash.String(t.seed, key)
	tag := uint32(h >> 56)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			break
		}
		if s>>24 == tag {
			id := int32(s&maxTableID) - 1
			if string(t.arena[t.off[id]:t.off[id+1]]) == key {
				return id, true
			}
		}
	}
	if t.extra != nil {
		id, ok := t.extra[key]
		return id, ok
	}
	return 0, false
}
