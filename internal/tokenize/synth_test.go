package tokenize

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// synthSpec describes a small byte-level tokenizer.json built in tests, so
// that the BPE is exercised without the downloaded fixtures.
type synthSpec struct {
	merges       [][2]string // in rank order
	extra        []string    // vocab tokens beyond bytes and merge results
	stringMerges bool        // "a b" form instead of ["a", "b"]
	ignoreMerges bool
	normalizer   any
	preTokenizer any
	added        []map[string]any
}

// llama3Pattern is the split regex of Llama-3 (and, with \p{N} instead of
// \p{N}{1,3}, of Qwen2/Qwen3).
const llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// synthJSON returns the tokenizer.json of s. Byte i has id i; merge
// results and extra tokens follow in order.
func synthJSON(s synthSpec) []byte {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteToRune[b])] = b
	}
	addTok := func(tok string) {
		if _, ok := vocab[tok]; !ok {
			vocab[tok] = len(vocab)
		}
	}
	var merges []any
	for _, m := range s.merges {
		a, b := byteLevelEncode(m[0]), byteLevelEncode(m[1])
		addTok(a + b)
		if s.stringMerges {
			merges = append(merges, a+" "+b)
		} else {
			merges = append(merges, []string{a, b})
		}
	}
	for _, e := range s.extra {
		addTok(byteLevelEncode(e))
	}
	pre := s.preTokenizer
	if pre == nil {
		pre = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}}
	}
	added := s.added
	if added == nil {
		added = []any2{}
	}
	doc := map[string]any{
		"version":       "1.0",
		"added_tokens":  added,
		"normalizer":    s.normalizer,
		"pre_tokenizer": pre,
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model": map[string]any{
			"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": s.ignoreMerges,
			"dropout": nil, "unk_token": nil, "byte_fallback": false,
		},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return data
}

// any2 keeps synthJSON's empty added_tokens a typed slice.
type any2 = map[string]any

// synthTok parses synthJSON(s).
func synthTok(t *testing.T, s synthSpec) *bpe {
	t.Helper()
	tok, err := ParseJSON(synthJSON(s), "synth.json")
	if err != nil {
		t.Fatal(err)
	}
	return tok.(*bpe)
}

// pieces decodes each id of ids separately.
func pieces(tok Tokenizer, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.Decode([]int{id})
	}
	return out
}

// TestSynthMerges checks merge order: lowest rank first, leftmost among
// equal ranks, in both merges forms, with and without ignore_merges.
func TestSynthMerges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec synthSpec
		text string
		want []string
	}{
		{"rank order", synthSpec{merges: [][2]string{{"b", "c"}, {"a", "b"}}}, "abc", []string{"a", "bc"}},
		{"rank order reversed", synthSpec{merges: [][2]string{{"a", "b"}, {"b", "c"}}}, "abc", []string{"ab", "c"}},
		{"leftmost tie", synthSpec{merges: [][2]string{{"a", "a"}}}, "aaa", []string{"aa", "a"}},
		{"leftmost tie chain", synthSpec{merges: [][2]string{{"a", "a"}, {"aa", "aa"}}}, "aaaaa", []string{"aaaa", "a"}},
		{"string merges", synthSpec{merges: [][2]string{{"b", "c"}, {"a", "b"}}, stringMerges: true}, "abc", []string{"a", "bc"}},
		{"space token", synthSpec{merges: [][2]string{{" ", "a"}}}, "a a", []string{"a", " a"}},
		{"no ignore_merges", synthSpec{merges: [][2]string{{"b", "c"}}, extra: []string{"abc"}}, "abc", []string{"a", "bc"}},
		{"ignore_merges", synthSpec{merges: [][2]string{{"b", "c"}}, extra: []string{"abc"}, ignoreMerges: true}, "abc", []string{"abc"}},
		{"multibyte", synthSpec{merges: [][2]string{{"\xc3", "\xa9"}}}, "é", []string{"é"}},
		{"split bytes", synthSpec{}, "é", []string{"\xc3", "\xa9"}},
		{"pieces", synthSpec{merges: [][2]string{{"a", "b"}}}, "ab ab\n\nab", []string{"ab", " ", "ab", "\n", "\n", "ab"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tok := synthTok(t, tc.spec)
			ids := tok.Encode(tc.text)
			if got := pieces(tok, ids); !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) pieces = %q, want %q", tc.text, got, tc.want)
			}
			if tok.Decode(ids) != tc.text {
				t.Errorf("Decode = %q", tok.Decode(ids))
			}
		})
	}
}

// TestSynthAdded checks added tokens: longest match first, lstrip, rstrip,
// single_word, normalized tokens and NFC.
func TestSynthAdded(t *testing.T) {
	t.Parallel()
	tokA := func(content string, opts map[string]any) map[string]any {
		m := map[string]any{"id": 1000 + len(content), "content": content, "special": true, "normalized": false}
		for k, v := range opts {
			m[k] = v
		}
		return m
	}
	nfc := map[string]any{"type": "NFC"}
	for _, tc := range []struct {
		name  string
		added []map[string]any
		norm  any
		text  string
		want  []string
	}{
		{"longest", []map[string]any{tokA("<a>", nil), tokA("<a><b>", nil)}, nil, "x<a><b>y<a>", []string{"x", "<a><b>", "y", "<a>"}},
		{"adjacent", []map[string]any{tokA("<a>", nil)}, nil, "<a><a>", []string{"<a>", "<a>"}},
		{"lstrip", []map[string]any{tokA("<m>", map[string]any{"lstrip": true})}, nil, "x  <m> y", []string{"x", "<m>", " ", "y"}},
		{"rstrip", []map[string]any{tokA("<m>", map[string]any{"rstrip": true})}, nil, "x  <m> \n y", []string{"x", " ", " ", "<m>", "y"}},
		{"single_word alone", []map[string]any{tokA("ab", map[string]any{"single_word": true})}, nil, "x ab y", []string{"x", " ", "ab", " ", "y"}},
		{"single_word inside", []map[string]any{tokA("ab", map[string]any{"single_word": true})}, nil, "xab", []string{"x", "a", "b"}},
		{"nfc text", nil, nfc, "e\u0301", []string{"\xc3", "\xa9"}},
		{"normalized token", []map[string]any{tokA("\u00e9!", map[string]any{"normalized": true, "special": false})}, nfc, "e\u0301!", []string{"\u00e9!"}},
		{"raw token not normalized", []map[string]any{tokA("e\u0301", nil)}, nfc, "e\u0301", []string{"e\u0301"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tok := synthTok(t, synthSpec{added: tc.added, normalizer: tc.norm})
			if got := pieces(tok, tok.Encode(tc.text)); !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) pieces = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestSynthPreTokenizers checks Split behaviors and ByteLevel options.
func TestSynthPreTokenizers(t *testing.T) {
	t.Parallel()
	split := func(pattern map[string]any, behavior string, invert bool) map[string]any {
		return map[string]any{"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}
	}
	dash := map[string]any{"String": "-"}
	for _, tc := range []struct {
		name string
		pre  any
		text string
		want []string
	}{
		{"isolated", split(dash, "Isolated", false), "a-b--c", []string{"a", "-", "b", "-", "-", "c"}},
		{"removed", split(dash, "Removed", false), "a-b--c", []string{"a", "b", "c"}},
		{"merged previous", split(dash, "MergedWithPrevious", false), "a-b--c", []string{"a-", "b-", "-", "c"}},
		{"merged next", split(dash, "MergedWithNext", false), "a-b--c", []string{"a", "-b", "-", "-c"}},
		{"contiguous", split(dash, "Contiguous", false), "a-b--c", []string{"a", "-", "b", "--", "c"}},
		{"removed inverted", split(map[string]any{"Regex": `\d+`}, "Removed", true), "ab12cd3", []string{"12", "3"}},
		{"bytelevel prefix", map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}, "hi there", []string{" hi", " there"}},
		{"digits", map[string]any{"type": "Digits", "individual_digits": true}, "a12", []string{"a", "1", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tok := synthTok(t, synthSpec{preTokenizer: tc.pre})
			var got []string
			tok.pre.run(tc.text, func(p string) { got = append(got, p) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("pieces of %q = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestParseErrors checks that malformed tokenizer.json files give clear
// errors.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	good := string(synthJSON(synthSpec{merges: [][2]string{{"a", "b"}}}))
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"not json", "{\n\"model\": }", "synth.json:2:10: model: missing value after object name"},
		{"truncated", "{\n\"model\": {\"vocab\": {\"a\": 0,\n", "synth.json:3:1: model.vocab: unexpected end of JSON input"},
		{"wrong type", `{"model": {"vocab": []}}`, "synth.json:1:21: model.vocab: want an object, got an array"},
		{"vocab id not a number", `{"model": {"vocab": {"a": "0"}}}`, `synth.json:1:27: model.vocab: token "a": id "0": want an integer`},
		{"vocab id negative", `{"model": {"vocab": {"a": -1}}}`, `synth.json:1:27: model.vocab: token "a": id -1: want an integer`},
		{"vocab id fraction", `{"model": {"vocab": {"a": 1.5}}}`, `model.vocab: token "a": id 1.5: want an integer`},
		{"duplicate token", `{"model": {"vocab": {"a": 0, "a": 1}}, "decoder": {"type": "ByteLevel"}}`, `synth.json: model.vocab: token "a": duplicate`},
		{"merges not a list", strings.Replace(good, `"merges":[["a","b"]]`, `"merges":{}`, 1), "model.merges: want an array, got an object"},
		{"merge pair of three", strings.Replace(good, `"merges":[["a","b"]]`, `"merges":[["a","b","c"]]`, 1), "model.merges[0]: want 2 tokens, got 3"},
		{"merge number", strings.Replace(good, `"merges":[["a","b"]]`, `"merges":[["a","b"],7]`, 1), "model.merges[1]: want a string or a pair of strings, got a number"},
		{"merge pair number", strings.Replace(good, `"merges":[["a","b"]]`, `"merges":[["a",1]]`, 1), "model.merges[0][1]: want a string, got a number"},
		{"small field type", `{"model": {"type": 3}}`, `synth.json:1:20: model.type: cannot use number as string`},
		{"added tokens type", `{"added_tokens": {}, "model": {}}`, `synth.json:1:18: added_tokens: cannot use object as`},
		{"trailing data", `{"model": null} {}`, `synth.json:1:17: unexpected data after the top-level value`},
		{"invalid utf-8", "{\"model\": {\"vocab\": {\"\xff\": 0}}}", "synth.json:1:23: model.vocab: invalid UTF-8"},
		{"no model", `{}`, "model: missing"},
		{"no vocab", `{"model": {"type": "BPE"}}`, "model.vocab: missing"},
		{"wordpiece", `{"model": {"type": "WordPiece", "vocab": {}}}`, `unsupported model "WordPiece"`},
		{"sentencepiece", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`, "not a byte-level BPE"},
		{"bad merge", strings.Replace(good, `"merges":[["a","b"]]`, `"merges":["ab"]`, 1), `model.merges[0]: "ab": want two tokens`},
		{"merge not in vocab", strings.Replace(good, `"merges":[["a","b"]]`, `"merges":[["a","zz"]]`, 1), `model.merges[0]: token "zz" not in vocab`},
		{"bad split", strings.Replace(good, `"behavior":"Isolated"`, `"behavior":"Sideways"`, 1), `pre_tokenizer.pretokenizers[0].behavior: unknown "Sideways"`},
		{"bad regex", strings.Replace(good, `"Regex":"`, `"Regex":"(`, 1), "pre_tokenizer.pretokenizers[0]: pattern"},
		{"bad normalizer", strings.Replace(good, `"normalizer":null`, `"normalizer":{"type":"Precompiled"}`, 1), `normalizer.type: unsupported normalizer "Precompiled"`},
		{"negative id", strings.Replace(good, `"model":{`, `"added_tokens":[{"id":-5,"content":"x"}],"model":{`, 1), "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON([]byte(tc.doc), "synth.json")
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "synth.json") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// TestSplitBacktracking checks that a tokenizer.json whose split regex
// backtracks catastrophically (regexp2 has no linear-time guarantee) is
// refused at load with an error naming the file and the field, rather than
// loaded and left to hang Count or Encode on a text such as a long run of
// one letter. It passes because ParseJSON returns at all: a match runs out
// of splitMatchTimeout long before its exponential end.
func TestSplitBacktracking(t *testing.T) {
	t.Parallel()
	split := func(regex string) map[string]any {
		return map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": regex}, "behavior": "Isolated"},
		}}
	}
	for _, tc := range []struct{ name, regex, probe string }{
		{"nested plus", `(a+)+$`, `48 × "a" then "A"`},
		{"nested letters", `(\p{L}+)+\d`, `48 × "a" then "A"`},
		{"alternation", `(?:\s|\s\s)*x`, `48 × " " then "a"`},
		{"digits", `^(\d*)*!?$`, `48 × "1" then "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON(synthJSON(synthSpec{preTokenizer: split(tc.regex)}), "slow.json")
			if err == nil {
				t.Fatalf("%s: no error", tc.regex)
			}
			want := fmt.Sprintf("slow.json: pre_tokenizer.pretokenizers[1]: pattern.Regex %q: a match took over 1s on %s", tc.regex, tc.probe)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to start with %q", err, want)
			}
		})
	}
	// Lookarounds and other backtracking constructs that stay fast load.
	for _, regex := range []string{`(?<=a)b`, `\s+(?!\S)|\s+`, `(?i:'s|'t)|\p{L}+|\p{N}{1,3}`} {
		if _, err := ParseJSON(synthJSON(synthSpec{preTokenizer: split(regex)}), "fast.json"); err != nil {
			t.Errorf("%s: %v", regex, err)
		}
	}
}
