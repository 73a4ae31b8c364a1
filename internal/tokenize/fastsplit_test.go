package tokenize

import (
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// spans lists the matches of f in s.
func spans(f finder, s string) string {
	var out []string
	f.find(s, func(start, end int) { out = append(out, fmt.Sprintf("%d-%d", start, end)) })
	return fmt.Sprint(out)
}

// FuzzFastSplit checks that the hand-written splitters (Llama-3 and
// cl100k_base, Qwen, o200k_base) find exactly the matches regexp2 finds for
// the same pattern.
func FuzzFastSplit(f *testing.F) {
	for _, s := range goldenTexts() {
		f.Add(s)
	}
	f.Add("'S 'LL 'Re 'x 12345 ١٢٣٤ \u00a0\u00a0x \n\n  \r\n \t\u3000")
	type pair struct {
		fast, slow finder
	}
	var pairs []pair
	for _, p := range []string{patternLlama3, patternQwen} {
		pairs = append(pairs, pair{fastFinder(p), regexFinder{regexp2.MustCompile(p, regexp2.None)}})
	}
	pairs = append(pairs, pair{newO200kSplit(), regexFinder{regexp2.MustCompile(patternO200k, regexp2.None)}})
	for _, s := range tiktokenSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for i, p := range pairs {
			if got, want := spans(p.fast, s), spans(p.slow, s); got != want {
				t.Fatalf("pattern %d, %q:\nfast  %s\nregex %s", i, s, got, want)
			}
		}
	})
}

// TestFastSplitPatterns checks that the fixtures' patterns are the ones the
// fast splitter recognizes.
func TestFastSplitPatterns(t *testing.T) {
	t.Parallel()
	if fastFinder(llama3Pattern) == nil {
		t.Error("Llama-3 pattern not recognized")
	}
	if fastFinder(`\s+`) != nil {
		t.Error(`\s+ recognized`)
	}
}
