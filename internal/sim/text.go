package sim

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/mtkit/mtkit/internal/tokenize"
)

// corpus is the text the output is drawn from; see docs/simulator.md.
//
//go:embed corpus.txt
var corpus string

// piece is one output token: its text, the text as a quoted JSON string
// (pre-rendered for the streaming hot path) and its token ids.
type piece struct {
	text string
	json []byte
	ids  []int
}

// vocab is the corpus as a cyclic sequence of pieces. Each word has a
// spaced form (" word", used inside the text) and a bare form ("word",
// used as the first token of a message); punctuation has one form.
type vocab struct {
	spaced []piece
	bare   []piece
	// exact reports whether every piece is one token of the tokenizer, so
	// that re-tokenizing the output gives the completion token count.
	exact bool
}

// newVocab splits the corpus into pieces, keeping those that are single
// tokens of tok. If too few are, it keeps them all and is not exact.
func newVocab(tok tokenize.Tokenizer) (*vocab, error) {
	var all, single vocab
	for _, w := range strings.Fields(corpus) {
		var punct string
		if last := w[len(w)-1]; last == ',' || last == '.' || last == ':' {
			w, punct = w[:len(w)-1], w[len(w)-1:]
		}
		if w != "" {
			sp, bp := newPiece(tok, " "+w), newPiece(tok, w)
			all.spaced, all.bare = append(all.spaced, sp), append(all.bare, bp)
			if len(sp.ids) == 1 && len(bp.ids) == 1 {
				single.spaced, single.bare = append(single.spaced, sp), append(single.bare, bp)
			}
		}
		if punct != "" {
			p := newPiece(tok, punct)
			all.spaced, all.bare = append(all.spaced, p), append(all.bare, p)
			if len(p.ids) == 1 {
				single.spaced, single.bare = append(single.spaced, p), append(single.bare, p)
			}
		}
	}
	if len(all.spaced) == 0 {
		return nil, fmt.Errorf("sim: empty output corpus")
	}
	if len(single.spaced) >= 64 {
		single.exact = true
		return &single, nil
	}
	return &all, nil
}

func newPiece(tok tokenize.Tokenizer, text string) piece {
	return piece{text: text, json: jsonString(text), ids: tok.Encode(text)}
}

// isWord reports whether piece i starts with a letter in its bare form.
func (v *vocab) isWord(i int) bool {
	t := v.bare[i].text
	return t != "" && unicode.IsLetter(rune(t[0]))
}

// walk returns n pieces starting at a word drawn from rng, the first in
// its bare form.
func (v *vocab) walk(rng *rand.Rand, n int) []*piece {
	if n <= 0 {
		return nil
	}
	i := rng.IntN(len(v.spaced))
	for k := 0; k < len(v.spaced) && !v.isWord(i); k++ {
		i = (i + 1) % len(v.spaced)
	}
	out := make([]*piece, n)
	out[0] = &v.bare[i]
	for k := 1; k < n; k++ {
		i = (i + 1) % len(v.spaced)
		out[k] = &v.spaced[i]
	}
	return out
}

// joinPieces returns the text of ps.
func joinPieces(ps []*piece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.text)
	}
	return b.String()
}

// appendIDs appends the token ids of ps to ids.
func appendIDs(ids []int, ps []*piece) []int {
	for _, p := range ps {
		ids = append(ids, p.ids...)
	}
	return ids
}
