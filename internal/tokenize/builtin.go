package tokenize

import (
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// builtin is a tiktoken encoding from github.com/tiktoken-go/tokenizer
// (pinned at v0.7.0: later versions mis-split whitespace runs) plus the
// encoding's special tokens, which that package does not match itself.
type builtin struct {
	name     string
	codec    tokenizer.Codec
	special  *matcher
	specials []string // token text by matcher index
	ids      []int    // token id by matcher index
	byID     map[int]string
}

var _ Tokenizer = (*builtin)(nil)

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

// newBuiltin returns the built-in encoding name (a canonical name).
func newBuiltin(name string) (*builtin, error) {
	c, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w", name, err)
	}
	// Decode builds the codec's reverse vocabulary lazily and without a
	// lock; build it now, before the tokenizer is shared.
	if _, err := c.Decode(nil); err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w", name, err)
	}
	b := &builtin{name: name, codec: c, byID: map[int]string{}}
	for s, id := range builtinSpecials[name] {
		b.specials = append(b.specials, s)
		b.ids = append(b.ids, id)
		b.byID[id] = s
	}
	b.special = newMatcher(b.specials)
	return b, nil
}

// Name returns the encoding name.
func (b *builtin) Name() string { return b.name }

// Encode returns the ids of text; special tokens in text become their ids.
func (b *builtin) Encode(text string) []int {
	ids := make([]int, 0, len(text)/4+1)
	b.segments(text, func(seg string, special int) {
		if special >= 0 {
			ids = append(ids, special)
			return
		}
		got, _, err := b.codec.Encode(seg)
		if err != nil {
			// The codec fails only on a regexp timeout, which is never set.
			return
		}
		for _, id := range got {
			ids = append(ids, int(id))
		}
	})
	return ids
}

// Count returns len(Encode(text)) without building the id slice.
func (b *builtin) Count(text string) int {
	n := 0
	b.segments(text, func(seg string, special int) {
		if special >= 0 {
			n++
			return
		}
		c, err := b.codec.Count(seg)
		if err == nil {
			n += c
		}
	})
	return n
}

// segments calls fn for each run of ordinary text (special = -1) and each
// special token (special = its id) of text, in order.
func (b *builtin) segments(text string, fn func(seg string, special int)) {
	pos := 0
	for pos < len(text) {
		s, e, tok, ok := b.special.find(text, pos)
		if !ok {
			break
		}
		if s > pos {
			fn(text[pos:s], -1)
		}
		fn("", b.ids[tok])
		pos = e
	}
	if pos < len(text) {
		fn(text[pos:], -1)
	}
}

// Decode returns the text of ids. Special token ids become their text; ids
// outside the vocabulary are skipped.
func (b *builtin) Decode(ids []int) string {
	buf := make([]byte, 0, len(ids)*4)
	one := make([]uint, 1)
	for _, id := range ids {
		if s, ok := b.byID[id]; ok {
			buf = append(buf, s...)
			continue
		}
		if id < 0 {
			continue
		}
		one[0] = uint(id)
		s, err := b.codec.Decode(one)
		if err != nil {
			continue
		}
		buf = append(buf, s...)
	}
	return string(buf)
}
