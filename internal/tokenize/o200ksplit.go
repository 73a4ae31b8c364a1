package tokenize

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Split patterns of the built-in tiktoken encodings, as compiled by
// github.com/tiktoken-go/tokenizer v0.7.0 (regexp2, default mode).
// cl100k_base's is the Llama-3 pattern; o200k_base's is run by o200kSplit.
// FuzzFastSplit checks both hand-written splitters against regexp2, and
// FuzzBuiltinTiktoken the whole encodings against tiktoken-go.
const (
	patternCl100k = patternLlama3
	patternO200k  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// Character classes of the o200k_base pattern, as bits of runeClass.
const (
	clsL  uint8 = 1 << iota // \p{L}
	clsN                    // \p{N}
	clsS                    // \s (unicode.IsSpace, as regexp2)
	clsU                    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: "upper" letters
	clsW                    // [\p{Ll}\p{Lm}\p{Lo}\p{M}]: "lower" letters
	clsNL                   // \r or \n
)

// classOf computes the class bits of r from Go's Unicode tables (the ones
// regexp2 uses).
func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clsL
	}
	if unicode.IsNumber(r) {
		c |= clsN
	}
	if unicode.IsSpace(r) {
		c |= clsS
	}
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clsU
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clsW
	}
	if r == '\r' || r == '\n' {
		c |= clsNL
	}
	return c
}

// bmpClasses holds classOf for every rune of the Basic Multilingual Plane;
// built once, on first use.
var (
	bmpOnce    sync.Once
	bmpClasses *[1 << 16]uint8
)

func loadBMPClasses() *[1 << 16]uint8 {
	bmpOnce.Do(func() {
		t := new([1 << 16]uint8)
		for r := range rune(len(t)) {
			t[r] = classOf(r)
		}
		bmpClasses = t
	})
	return bmpClasses
}

// o200kSplit matches the o200k_base split pattern without a regex engine,
// following regexp2's backtracking order alternative by alternative.
type o200kSplit struct{ bmp *[1 << 16]uint8 }

func newO200kSplit() o200kSplit { return o200kSplit{bmp: loadBMPClasses()} }

// class returns the class bits of r (0 for r < 0, the end of the text).
func (f o200kSplit) class(r rune) uint8 {
	switch {
	case r < 0:
		return 0
	case r < 1<<16:
		return f.bmp[r]
	}
	return classOf(r)
}

// classAt returns the class and length of the rune at i (0, 0 at the end).
func (f o200kSplit) classAt(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return f.bmp[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return f.class(r), n
}

// run returns the end of the longest run of runes with a bit of want
// starting at i.
func (f o200kSplit) run(s string, i int, want uint8) int {
	for {
		c, n := f.classAt(s, i)
		if c&want == 0 {
			return i
		}
		i += n
	}
}

func (f o200kSplit) find(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		e := f.match(s, i)
		fn(i, e)
		i = e
	}
}

// match returns the end of the match that starts at i < len(s) (the pattern
// matches at every position).
func (f o200kSplit) match(s string, i int) int {
	cc, n := f.classAt(s, i)
	// Alternatives 1 and 2: words.
	if e := f.word(s, i, cc, n); e >= 0 {
		return e
	}
	// \p{N}{1,3}
	if cc&clsN != 0 {
		j := i + n
		for k := 1; k < 3; k++ {
			c, m := f.classAt(s, j)
			if c&clsN == 0 {
				break
			}
			j += m
		}
		return j
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
	j := i
	if s[i] == ' ' {
		j++
	}
	if c, _ := f.classAt(s, j); j < len(s) && c&(clsS|clsL|clsN) == 0 {
		for {
			c, m := f.classAt(s, j)
			if m == 0 || c&(clsS|clsL|clsN) != 0 {
				break
			}
			j += m
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	// Here the rune at i is whitespace: every other rune is a letter or
	// mark (a word), a number or a [^\s\p{L}\p{N}].
	return matchSpace(s, i)
}

// word matches the two word alternatives at i, whose rune has class cc and
// length n, and returns the end, or -1:
//
//	P?[U]*[W]+C? | P?[U]+[W]*C?
//
// with P = [^\r\n\p{L}\p{N}], U and W the upper and lower letter classes
// (marks and other letters are in both) and C the optional contraction.
// Each alternative tries P first, then no P; the first that matches wins.
func (f o200kSplit) word(s string, i int, cc uint8, n int) int {
	var starts [2]int
	k := 0
	if cc&(clsL|clsN|clsNL) == 0 {
		starts[k] = i + n
		k++
	}
	starts[k] = i
	k++
	for _, p := range starts[:k] {
		if e := f.upperLower(s, p); e >= 0 {
			return contraction(s, e)
		}
	}
	for _, p := range starts[:k] {
		if c, m := f.classAt(s, p); c&clsU != 0 {
			e := f.run(s, p+m, clsU)
			return contraction(s, f.run(s, e, clsW))
		}
	}
	return -1
}

// upperLower matches [U]*[W]+ at p with backtracking and returns its end,
// or -1. [U]* first takes the longest run; if no W follows, it gives back
// runes from the right until the rune it gave back is a W, which [W]+ then
// matches alone (the rune after it is not a W).
func (f o200kSplit) upperLower(s string, p int) int {
	u := f.run(s, p, clsU)
	if c, _ := f.classAt(s, u); c&clsW != 0 {
		return f.run(s, u, clsW)
	}
	for k := u; k > p; {
		r, m := utf8.DecodeLastRuneInString(s[p:k])
		if f.class(r)&clsW != 0 {
			return k
		}
		k -= m
	}
	return -1
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d)? at e.
func contraction(s string, e int) int {
	if e+1 >= len(s) || s[e] != '\'' {
		return e
	}
	switch s[e+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return e + 2
	case 'r', 'v':
		if e+2 < len(s) && s[e+2]|0x20 == 'e' {
			return e + 3
		}
	case 'l':
		if e+2 < len(s) && s[e+2]|0x20 == 'l' {
			return e + 3
		}
	}
	return e
}

// matchSpace matches \s*[\r\n]+|\s+(?!\S)|\s+ at i, where s holds
// whitespace.
func matchSpace(s string, i int) int {
	// \s*[\r\n]+ ends after the run's last \r or \n.
	w, lastNL := i, -1
	for {
		r, m := runeAt(s, w)
		if r < 0 || !isSpace(r) {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = w + 1
		}
		w += m
	}
	if lastNL > 0 {
		return lastNL
	}
	// \s+(?!\S): the whole run at the end of s, else all but its last rune.
	if w == len(s) {
		return w
	}
	_, m := utf8.DecodeLastRuneInString(s[i:w])
	if w-m > i {
		return w - m
	}
	// \s+
	return w
}
