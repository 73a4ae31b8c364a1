// Package synth makes text of exact token counts in a chosen tokenizer,
// cut from an embedded public-domain corpus: the prompts of mtgen's
// synthetic conversations and of replayed production traces (Blocks:
// the same block id always gives the same token block, and blocks
// concatenate without merging tokens).
package synth

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Tokenizer is what synthesis needs from a tokenizer;
// tokenize.Tokenizer satisfies it.
type Tokenizer interface {
	Encode(text string) []int
	Decode(ids []int) string
	Count(text string) int
}

// DecodeValid decodes ids and drops the partial UTF-8 sequences a window
// can start or end in (a byte-level token may hold part of a character).
func DecodeValid(tok Tokenizer, ids []int) string {
	if len(ids) == 0 {
		return ""
	}
	s := tok.Decode(ids)
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-size]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// ExactText returns head followed by corpus text from win such that the
// whole encodes to exactly n tokens, and that count. headTokens is the
// expected token count of head alone (a starting guess). If head alone
// already has more than n tokens, it returns head and its count. win must
// have some spare tokens beyond n-headTokens for the adjustment.
//
// The method: decode the first k tokens of the window, re-encode head+text,
// and move k by the difference until the count is exact (one or two
// encodings almost always). If that oscillates (a token boundary that
// merges differently each way), it trims the text rune by rune, then tries
// the window shifted by one token.
func ExactText(tok Tokenizer, head string, headTokens int, win []int, n int) (string, int, error) {
	return ExactTextTail(tok, head, headTokens, win, n, "")
}

// ExactTextTail is ExactText with tail appended after the corpus text: the
// result, head + text + tail, encodes to exactly n tokens.
func ExactTextTail(tok Tokenizer, head string, headTokens int, win []int, n int, tail string) (string, int, error) {
	for shift := 0; shift < 8 && shift <= len(win); shift++ {
		text, c, ok := exactFrom(tok, head, headTokens, win[shift:], n, tail)
		if ok || c > n && text == head+tail {
			return text, c, nil
		}
	}
	return "", 0, fmt.Errorf("could not make a text of exactly %d tokens (corpus window of %d tokens)", n, len(win))
}

// exactFrom is one attempt of exactText on one window. It returns ok, or
// head with its count when head alone is too long.
func exactFrom(tok Tokenizer, head string, headTokens int, win []int, n int, tail string) (string, int, bool) {
	k := min(max(n-headTokens, 0), len(win))
	tried := map[int]int{} // k -> count
	over := -1             // smallest k seen with count > n
	for iter := 0; iter < 8; iter++ {
		text := head + DecodeValid(tok, win[:k]) + tail
		c := tok.Count(text)
		if c == n {
			return text, c, true
		}
		if k == 0 && c > n {
			return head + tail, c, false
		}
		tried[k] = c
		if c > n && (over < 0 || k < over) {
			over = k
		}
		nk := min(max(k+n-c, 0), len(win))
		if _, seen := tried[nk]; seen {
			break
		}
		k = nk
	}
	if over < 0 {
		return "", 0, false
	}
	// Trim the over-long text rune by rune.
	body := DecodeValid(tok, win[:over])
	for i := 0; i < 64 && body != ""; i++ {
		_, size := utf8.DecodeLastRuneInString(body)
		body = body[:len(body)-size]
		c := tok.Count(head + body + tail)
		if c == n {
			return head + body + tail, c, true
		}
		if c < n {
			break
		}
	}
	return "", 0, false
}
