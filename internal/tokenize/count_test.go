package tokenize

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// countTexts returns the texts TestCountIsLenEncode counts: the golden
// texts, the English and mixed-script corpora in chunks, a run without
// white space longer than maxPiece (merged in chunks, through encodePiece's
// scratch), and random strings of bytes and of runes (invalid UTF-8
// included).
func countTexts(t testing.TB) []string {
	t.Helper()
	texts := goldenTexts()
	chunks := func(s string, n int) {
		for len(s) > n {
			k := n
			for k > 0 && !utf8.RuneStart(s[k]) {
				k--
			}
			texts = append(texts, s[:k])
			s = s[k:]
		}
		texts = append(texts, s)
	}
	chunks(benchCorpus(t)[:64<<10], 3000)
	chunks(mixedCorpus(64<<10), 3000)
	texts = append(texts, noSpaceCorpus("letters", maxPiece+1000))
	r := rand.New(rand.NewPCG(26, 26))
	const alphabet = "ab Z9 \n\t'sé中😀\u0301<|endoftext|>"
	runes := []rune(alphabet)
	for range 300 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b))
		var sb strings.Builder
		for range r.IntN(200) {
			sb.WriteRune(runes[r.IntN(len(runes))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// TestCountIsLenEncode checks Count(s) == len(Encode(s)) on every
// tokenizer over countTexts, with all tokenizers counting at once so that
// the race detector sees the encoders they share.
func TestCountIsLenEncode(t *testing.T) {
	toks := roundTripTokenizers(t)
	texts := countTexts(t)
	var wg sync.WaitGroup
	for name, tok := range toks {
		wg.Go(func() {
			for _, s := range texts {
				if n, ids := tok.Count(s), tok.Encode(s); n != len(ids) {
					t.Errorf("%s: Count(%q) = %d, len(Encode) = %d", name, s, n, len(ids))
				}
			}
		})
	}
	wg.Wait()
}
