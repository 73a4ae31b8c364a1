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

// span is a run of n pieces of the cyclic vocabulary from start, the
// first in its bare form. It is computed piece by piece, so an output of
// any length costs no memory.
type span struct{ start, n int }

// span draws the start of a run of n pieces: a word at a position drawn
// from rng.
func (v *vocab) span(rng *rand.Rand, n int) span {
	i := rng.IntN(len(v.spaced))
	for k := 0; k < len(v.spaced) && !v.isWord(i); k++ {
		i = (i + 1) % len(v.spaced)
	}
	return span{start: i, n: max(n, 0)}
}

// at returns piece k of s.
func (v *vocab) at(s span, k int) *piece {
	if k == 0 {
		return &v.bare[s.start]
	}
	return &v.spaced[(s.start+k)%len(v.spaced)]
}

// text returns the text of s.
func (v *vocab) text(s span) string {
	var b strings.Builder
	for k := range s.n {
		b.WriteString(v.at(s, k).text)
	}
	return b.String()
}

// appendIDs appends the token ids of s to ids.
func (v *vocab) appendIDs(ids []int, s span) []int {
	for k := range s.n {
		ids = append(ids, v.at(s, k).ids...)
	}
	return ids
}
