package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// gpt2Pattern is the split regex of the ByteLevel pre-tokenizer when
// use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// splitStep is one pre-tokenization step: it cuts s into pieces, calling
// emit for each non-empty piece in order.
type splitStep interface {
	split(s string, emit func(string))
}

// behavior is what a Split pre-tokenizer does with the delimiters it finds.
type behavior int

const (
	behaviorIsolated behavior = iota
	behaviorRemoved
	behaviorMergedWithPrevious
	behaviorMergedWithNext
	behaviorContiguous
)

var behaviors = map[string]behavior{
	"Isolated":           behaviorIsolated,
	"Removed":            behaviorRemoved,
	"MergedWithPrevious": behaviorMergedWithPrevious,
	"MergedWithNext":     behaviorMergedWithNext,
	"Contiguous":         behaviorContiguous,
}

// span is a byte range of a string and whether it is a delimiter match.
type span struct {
	start, end int
	match      bool
}

// finder reports the non-overlapping matches of a pattern in s, in order.
type finder interface {
	find(s string, fn func(start, end int))
}

// coverFinder is a finder whose pattern matches at every position, so that
// its matches cover s one after the other: match returns the end (> i) of
// the match that starts at i < len(s). splitter uses it to cut s without a
// callback.
type coverFinder interface {
	finder
	match(s string, i int) int
}

var (
	_ coverFinder = fastSplit{}
	_ coverFinder = o200kSplit{}
)

// regexFinder finds the matches of a regexp2 expression (default .NET
// mode: Unicode-aware classes, lookarounds). A match that runs out of the
// expression's MatchTimeout ends the search: the rest of s is then left
// unmatched.
type regexFinder struct{ re *regexp2.Regexp }

func (f regexFinder) find(s string, fn func(start, end int)) {
	_ = f.findErr(s, fn)
}

// findErr is find that returns regexp2's error (a match timeout).
func (f regexFinder) findErr(s string, fn func(start, end int)) error {
	m, err := f.re.FindStringMatch(s)
	// regexp2 reports rune offsets; walk the string to turn them into
	// byte offsets.
	ri, bi := 0, 0
	toByte := func(r int) int {
		for ri < r && bi < len(s) {
			_, n := utf8.DecodeRuneInString(s[bi:])
			bi += n
			ri++
		}
		return bi
	}
	for err == nil && m != nil {
		start := toByte(m.Index)
		end := toByte(m.Index + m.Length)
		fn(start, end)
		m, err = f.re.FindNextMatch(m)
	}
	return err
}

// splitMatchTimeout bounds the time of one match of a tokenizer.json's own
// split regex. regexp2 backtracks, so a pattern such as (a+)+$ takes time
// exponential in the length of a run of a's: with the bound, such a match
// ends with an error instead of hanging the tool. A normal pattern's match
// takes microseconds.
const splitMatchTimeout = time.Second

// probeKinds are the kinds of character a tokenizer.json's split regex is
// probed with at load: letters, digits, spaces, punctuation, CJK, emoji.
var probeKinds = []string{"a", "A", "é", "1", " ", "\n", "!", "'", "中", "😀"}

// probeRun is the length of a probe's run of one kind of character: long
// enough for exponential backtracking to run out of splitMatchTimeout.
const probeRun = 48

// checkBacktracking runs f on every run of probeRun characters of one kind
// followed by one character of another kind (the texts on which
// catastrophic backtracking shows) and returns an error if a match ran out
// of its MatchTimeout.
func checkBacktracking(f regexFinder) error {
	for _, run := range probeKinds {
		for _, end := range probeKinds {
			if end == run {
				continue
			}
			if err := f.findErr(strings.Repeat(run, probeRun)+end, func(int, int) {}); err != nil {
				// Not err itself: regexp2's message repeats the whole text.
				return fmt.Errorf("a match took over %v on %d × %q then %q (catastrophic backtracking: rewrite the regex)",
					f.re.MatchTimeout, probeRun, run, end)
			}
		}
	}
	return nil
}

// literalFinder finds the occurrences of a fixed string.
type literalFinder struct{ lit string }

func (f literalFinder) find(s string, fn func(start, end int)) {
	if f.lit == "" {
		return
	}
	for pos := 0; pos <= len(s); {
		i := strings.Index(s[pos:], f.lit)
		if i < 0 {
			return
		}
		fn(pos+i, pos+i+len(f.lit))
		pos += i + len(f.lit)
	}
}

// splitter is the Split pre-tokenizer (and the regex half of ByteLevel).
type splitter struct {
	f        finder
	behavior behavior
	invert   bool
}

func (sp *splitter) split(s string, emit func(string)) {
	if s == "" {
		return
	}
	if sp.behavior == behaviorIsolated {
		// Every match and every gap is a piece of its own, inverted or not.
		if c, ok := sp.f.(coverFinder); ok {
			// No gaps; and no closure to allocate.
			for i := 0; i < len(s); {
				e := c.match(s, i)
				emit(s[i:e])
				i = e
			}
			return
		}
		prev := 0
		sp.f.find(s, func(start, end int) {
			if start > prev {
				emit(s[prev:start])
			}
			if end > start {
				emit(s[start:end])
			}
			prev = end
		})
		if prev < len(s) {
			emit(s[prev:])
		}
		return
	}
	var spans []span
	prev := 0
	sp.f.find(s, func(start, end int) {
		if start > prev {
			spans = append(spans, span{prev, start, sp.invert})
		}
		spans = append(spans, span{start, end, !sp.invert})
		prev = end
	})
	if prev < len(s) {
		spans = append(spans, span{prev, len(s), sp.invert})
	}
	var out []span
	switch sp.behavior {
	case behaviorRemoved:
		for _, x := range spans {
			if !x.match {
				out = append(out, x)
			}
		}
	case behaviorMergedWithPrevious:
		prevMatch := false
		for _, x := range spans {
			if x.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = x.end
			} else {
				out = append(out, x)
			}
			prevMatch = x.match
		}
	case behaviorMergedWithNext:
		prevMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			x := spans[i]
			if x.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = x.start
			} else {
				out = append(out, x)
			}
			prevMatch = x.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	case behaviorContiguous:
		prevMatch := false
		for i, x := range spans {
			if i > 0 && x.match == prevMatch {
				out[len(out)-1].end = x.end
			} else {
				out = append(out, x)
			}
			prevMatch = x.match
		}
	}
	for _, x := range out {
		if x.end > x.start {
			emit(s[x.start:x.end])
		}
	}
}

// prefixSpace is the add_prefix_space half of the ByteLevel pre-tokenizer.
type prefixSpace struct{}

func (prefixSpace) split(s string, emit func(string)) {
	if s == "" {
		return
	}
	if s[0] != ' ' {
		s = " " + s
	}
	emit(s)
}

// digitsFinder finds digits: each one alone, or runs of them.
type digitsFinder struct{ individual bool }

func (f digitsFinder) find(s string, fn func(start, end int)) {
	start := -1
	for i, r := range s {
		if unicode.IsDigit(r) || unicode.In(r, unicode.Nl, unicode.No) {
			if f.individual {
				fn(i, i+utf8.RuneLen(r))
				continue
			}
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			fn(start, i)
			start = -1
		}
	}
	if start >= 0 {
		fn(start, len(s))
	}
}

// compileSplit returns the finder of a Split pattern, using a hand-written
// splitter when the regex is one of the well-known ones.
func compileSplit(p *hfPattern) (finder, error) {
	switch {
	case p == nil:
		return nil, fmt.Errorf("missing \"pattern\"")
	case p.Regex != nil:
		if f := fastFinder(*p.Regex); f != nil {
			return f, nil
		}
		re, err := regexp2.Compile(*p.Regex, regexp2.None)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", *p.Regex, err)
		}
		re.MatchTimeout = splitMatchTimeout
		f := regexFinder{re}
		if err := checkBacktracking(f); err != nil {
			return nil, fmt.Errorf("pattern.Regex %q: %w", *p.Regex, err)
		}
		return f, nil
	case p.String != nil:
		return literalFinder{*p.String}, nil
	}
	return nil, fmt.Errorf("pattern: want \"Regex\" or \"String\"")
}

// parsePreTokenizer appends the steps of a pre_tokenizer object to steps
// and reports whether a ByteLevel step was seen.
func parsePreTokenizer(raw json.RawMessage, field string, steps []splitStep) ([]splitStep, bool, error) {
	c, err := parseComponent(raw, field)
	if err != nil {
		return nil, false, err
	}
	switch c.Type {
	case "Sequence":
		byteLevel := false
		for i, sub := range c.Pretokenizers {
			var bl bool
			steps, bl, err = parsePreTokenizer(sub, fmt.Sprintf("%s.pretokenizers[%d]", field, i), steps)
			if err != nil {
				return nil, false, err
			}
			byteLevel = byteLevel || bl
		}
		return steps, byteLevel, nil
	case "Split":
		b, ok := behaviors[c.Behavior]
		if !ok {
			return nil, false, fmt.Errorf("%s.behavior: unknown %q", field, c.Behavior)
		}
		f, err := compileSplit(c.Pattern)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", field, err)
		}
		return append(steps, &splitter{f: f, behavior: b, invert: c.Invert}), false, nil
	case "ByteLevel":
		if c.AddPrefixSpace == nil || *c.AddPrefixSpace {
			steps = append(steps, prefixSpace{})
		}
		if c.UseRegex == nil || *c.UseRegex {
			f, err := compileSplit(&hfPattern{Regex: ptr(gpt2Pattern)})
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", field, err)
			}
			steps = append(steps, &splitter{f: f, behavior: behaviorIsolated})
		}
		return steps, true, nil
	case "Digits":
		return append(steps, &splitter{f: digitsFinder{c.IndividualDigits}, behavior: behaviorIsolated}), false, nil
	}
	return nil, false, fmt.Errorf("%s.type: unsupported pre-tokenizer %q (supported: Sequence, Split, ByteLevel, Digits)", field, c.Type)
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// pipeline runs pre-tokenization steps one after the other.
type pipeline []splitStep

// run splits s through every step, calling emit for each final piece.
func (p pipeline) run(s string, emit func(string)) {
	switch len(p) {
	case 0:
		if s != "" {
			emit(s)
		}
	case 1:
		p[0].split(s, emit)
	default:
		p[0].split(s, func(piece string) { p[1:].run(piece, emit) })
	}
}
