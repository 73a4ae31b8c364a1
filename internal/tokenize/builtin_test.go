package tokenize

import (
	"slices"
	"testing"
)

// TestBuiltinKnown checks the built-in encodings on strings whose ids were
// taken from js-tiktoken 1.0.21 (OpenAI's ranks).
func TestBuiltinKnown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		text string
		want []int
	}{
		{"o200k_base", "hello world", []int{24912, 2375}},
		{"o200k_base", "Hello, World!", []int{13225, 11, 5922, 0}},
		{"o200k_base", " \n \n", []int{56319}},
		{"o200k_base", "<|endoftext|>", []int{199999}},
		{"o200k_base", "日本語", []int{9048, 40909}},
		{"o200k_base", "   x", []int{256, 1215}},
		{"cl100k_base", "hello world", []int{15339, 1917}},
		{"cl100k_base", "Hello, World!", []int{9906, 11, 4435, 0}},
		{"cl100k_base", " \n \n", []int{33006}},
		{"cl100k_base", "<|endoftext|>", []int{100257}},
		{"cl100k_base", "日本語", []int{9080, 22656, 45918, 252}},
		{"cl100k_base", "   x", []int{256, 865}},
		{"", "hello world", []int{24912, 2375}},
		{"gpt-4o", "hello world", []int{24912, 2375}},
		{"o200k", "hello world", []int{24912, 2375}},
		{"gpt-4", "hello world", []int{15339, 1917}},
		{"cl100k", "hello world", []int{15339, 1917}},
		{"CL100K_BASE", "hello world", []int{15339, 1917}},
	} {
		t.Run(tc.spec+"/"+tc.text, func(t *testing.T) {
			t.Parallel()
			tok, err := Load(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
			if got := tok.Count(tc.text); got != len(tc.want) {
				t.Errorf("Count(%q) = %d, want %d", tc.text, got, len(tc.want))
			}
			if got := tok.Decode(tc.want); got != tc.text {
				t.Errorf("Decode(%v) = %q, want %q", tc.want, got, tc.text)
			}
		})
	}
}

// TestBuiltinUnicodeSpace checks that \s in the split pattern is Unicode
// White_Space, as in OpenAI's tiktoken (Rust regex), not JavaScript's \s:
// U+0085 is a space, U+FEFF is not. js-tiktoken differs here, so the test
// asserts the split, not reference ids.
func TestBuiltinUnicodeSpace(t *testing.T) {
	t.Parallel()
	for _, spec := range builtinModels {
		tok, err := Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			text   string
			pieces []string
		}{
			// " " is \s+(?!\S) because U+0085 after it is a space; then
			// U+0085 is the optional non-letter prefix of "next".
			{" \u0085next", []string{" ", "\u0085next"}},
			// U+FEFF is not a space: " \uFEFF" is one punctuation run.
			{" \ufeffBOM", []string{" \ufeff", "BOM"}},
		} {
			var want []int
			for _, p := range tc.pieces {
				want = append(want, tok.Encode(p)...)
			}
			if got := tok.Encode(tc.text); !slices.Equal(got, want) {
				t.Errorf("%s: Encode(%q) = %v, want %v (pieces %q)", spec, tc.text, got, want, tc.pieces)
			}
		}
	}
}

// TestBuiltinDecodeUnknown checks that Decode skips ids outside the
// vocabulary instead of failing.
func TestBuiltinDecodeUnknown(t *testing.T) {
	t.Parallel()
	tok, err := Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Decode([]int{24912, -1, 1 << 30, 2375}); got != "hello world" {
		t.Errorf("Decode = %q, want %q", got, "hello world")
	}
	if got := tok.Decode(nil); got != "" {
		t.Errorf("Decode(nil) = %q", got)
	}
}
