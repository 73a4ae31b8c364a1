package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// Split patterns with a hand-written equivalent: Llama-3 (digits in runs
// of up to three) and Qwen2/Qwen3 (digits one by one). FuzzFastSplit checks
// that fastSplit finds exactly the matches regexp2 finds.
const (
	patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternQwen   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// fastFinder returns a hand-written finder equivalent to the regex pattern,
// or nil when there is none.
func fastFinder(pattern string) finder {
	switch pattern {
	case patternLlama3:
		return fastSplit{maxDigits: 3}
	case patternQwen:
		return fastSplit{maxDigits: 1}
	}
	return nil
}

// fastSplit matches the Llama-3/Qwen split pattern without a regex engine.
// Classes are those of regexp2's default mode: \s is unicode.IsSpace,
// \p{L} unicode.IsLetter, \p{N} unicode.IsNumber.
type fastSplit struct{ maxDigits int }

func (f fastSplit) find(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		e := f.match(s, i)
		fn(i, e)
		i = e
	}
}

// runeAt decodes the rune at i (RuneError, 1 for invalid bytes; 0, 0 at the
// end).
func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.IsSpace(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return (r|0x20) >= 'a' && (r|0x20) <= 'z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.IsNumber(r)
}

// match returns the end of the match that starts at i (the pattern matches
// at every position, so it never fails).
func (f fastSplit) match(s string, i int) int {
	c, n := runeAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if c == '\'' && i+1 < len(s) {
		switch s[i+1] | 0x20 {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2]|0x20 == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2]|0x20 == 'l' {
				return i + 3
			}
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	j := i
	if !isLetter(c) && c != '\r' && c != '\n' && !isNumber(c) {
		j = i + n
	}
	if r, m := runeAt(s, j); isLetter(r) {
		j += m
		for {
			r, m := runeAt(s, j)
			if !isLetter(r) {
				return j
			}
			j += m
		}
	}
	// \p{N}{1,maxDigits}
	if isNumber(c) {
		j = i + n
		for k := 1; k < f.maxDigits; k++ {
			r, m := runeAt(s, j)
			if !isNumber(r) {
				break
			}
			j += m
		}
		return j
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j = i
	if c == ' ' {
		j++
	}
	if r, _ := runeAt(s, j); r >= 0 && !isSpace(r) && !isLetter(r) && !isNumber(r) {
		for {
			r, m := runeAt(s, j)
			if r < 0 || isSpace(r) || isLetter(r) || isNumber(r) {
				break
			}
			j += m
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// Here c is whitespace.
	return matchSpace(s, i)
}
