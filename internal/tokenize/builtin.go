package tokenize

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tiktoken-go/tokenizer"
)

// builtinSpecials lists the special tokens of each built-in encoding, as in
// OpenAI's tiktoken.
var builtinSpecials = map[string]map[string]int{
	"o200k_base": {
		"<|endoftext|>":   199999,
		"<|endofprompt|>": 200018,
	},
	"cl100k_base": {
		"<|endoftext|>":   100257,
		"<|fim_prefix|>":  100258,
		"<|fim_middle|>":  100259,
		"<|fim_suffix|>":  100260,
		"<|endofprompt|>": 100276,
	},
}

// builtinSplit returns the hand-written splitter of a built-in encoding's
// split pattern.
func builtinSplit(name string) finder {
	if name == "o200k_base" {
		return newO200kSplit()
	}
	return fastFinder(patternCl100k)
}

// newBuiltin returns the built-in tiktoken encoding name (a canonical name)
// as a byte-level BPE run by this package.
//
// The ranks come from github.com/tiktoken-go/tokenizer (pinned at v0.7.0:
// later versions mis-split whitespace runs): each id is decoded to its
// bytes once. tiktoken's BPE is rank-based: a piece that is a token is that
// token (ignore_merges); otherwise, starting from single bytes, the
// adjacent pair whose concatenation is the token of lowest rank (its id)
// merges, leftmost first among equal ranks (mergeRanks). The split pattern
// is run by a hand-written splitter; special tokens are matched first, as
// added tokens.
func newBuiltin(name string) (*bpe, error) {
	specials, ok := builtinSpecials[name]
	if !ok {
		return nil, fmt.Errorf("tokenizer %q: no special tokens known", name)
	}
	c, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w", name, err)
	}
	maxID := 0
	for _, id := range specials {
		maxID = max(maxID, id)
	}
	t := &bpe{
		name:         name,
		rankMerges:   true,
		ignoreMerges: true,
		unkID:        -1,
		pre:          pipeline{&splitter{f: builtinSplit(name), behavior: behaviorIsolated}},
		cache:        newPieceCache(),
	}
	// The codec knows no special tokens, so their ids fail to decode, as
	// do unassigned ids.
	// Room for every id up front: o200k_base's tokens average under 8
	// bytes, so the builder's arrays do not grow (and leave garbage)
	// while 200k tokens go in.
	tb := tableBuilder{
		texts: make([]tableText, 0, maxID+1),
		keys:  make([]tableKey, 0, maxID+1),
		data:  make([]byte, 0, 8*(maxID+1)),
	}
	one := make([]uint, 1)
	for id := range maxID + 1 {
		one[0] = uint(id)
		s, err := c.Decode(one)
		if err != nil || s == "" {
			continue
		}
		tb.both(int32(id), []byte(s))
	}
	for s, id := range specials {
		tb.text(int32(id), []byte(s))
	}
	if t.vocab, err = tb.build(int32(maxID)); err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w", name, err)
	}
	for b := range 256 {
		id, ok := t.vocab.lookup(string([]byte{byte(b)}))
		if !ok {
			return nil, fmt.Errorf("tokenizer %q: byte %#02x is not a token", name, b)
		}
		t.byteID[b] = id
	}
	// Special tokens, in id order.
	for s, id := range specials {
		t.added = append(t.added, addedToken{content: s, id: int32(id), special: true})
	}
	slices.SortFunc(t.added, func(a, b addedToken) int { return cmp.Compare(a.id, b.id) })
	var toks []string
	for i, a := range t.added {
		toks = append(toks, a.content)
		t.rawIdx = append(t.rawIdx, i)
	}
	t.rawMatch = newMatcher(toks)
	t.normMatch = newMatcher(nil)
	return t, nil
}
