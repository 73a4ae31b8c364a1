package tokenize

import (
	"os"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/mtkit/mtkit/internal/clitest"
)

// FuzzParseJSON feeds malformed tokenizer.json documents to ParseJSON: it
// must return a tokenizer or an error naming the file, never panic, and a
// tokenizer it returns must encode without panicking.
//
// Its inputs are kilobytes (a byte-level vocab), so go's minimization of a
// new input (quadratic in its length) runs to -fuzzminimizetime (60 s by
// default) while the fuzzer reports 0 execs/s: run it with e.g.
// -fuzzminimizetime 5s (scripts/fuzz.sh -m 5s).
func FuzzParseJSON(f *testing.F) {
	f.Add(synthJSON(synthSpec{merges: [][2]string{{"a", "b"}, {"ab", "c"}}}))
	f.Add(synthJSON(synthSpec{merges: [][2]string{{"a", "b"}}, stringMerges: true, ignoreMerges: true,
		normalizer: map[string]any{"type": "NFC"},
		added:      []map[string]any{{"id": 300, "content": "<x>", "lstrip": true, "rstrip": true, "single_word": true}}}))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a"]},"pre_tokenizer":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":{"vocab":{"Ġ":0,"a":1,"Ġa":2},"merges":[["Ġ","a"]]},"decoder":{"type":"ByteLevel"},"added_tokens":[{"id":99999999,"content":"x"}]}`))
	f.Add([]byte(`{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Contiguous"}]}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"model":null}`))
	f.Add([]byte(`{"model":{"vocab":{"a":0,"\u0100":1,"x y":2,"a":3},"merges":["a \u0100",["x y","a"]],"unk_token":"x y"},"decoder":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"Model":{"VOCAB":{"a":0},"merges":null},"added_tokens":[{"id":0,"content":"a"}],"decoder":{"type":"ByteLevel"}} x`))
	f.Add([]byte(`{"model":{"vocab":{"a":1.5}},"model":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := ParseJSON(data, "fuzz.json")
		if err != nil {
			if len(err.Error()) < len("fuzz.json") || err.Error()[:len("fuzz.json")] != "fuzz.json" {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, s := range []string{"", "ab c", "<x> a\n\n", "é\u0301 😀 123"} {
			ids := tok.Encode(s)
			if n := tok.Count(s); n != len(ids) {
				t.Fatalf("Count(%q) = %d, len(Encode) = %d", s, n, len(ids))
			}
			_ = tok.Decode(ids)
		}
	})
}

// roundTripTokenizers returns the tokenizers FuzzRoundTrip and
// TestCountIsLenEncode check: the built-ins, a synthetic byte-level BPE and
// the fixtures that exist.
func roundTripTokenizers(f testing.TB) map[string]Tokenizer {
	f.Helper()
	toks := map[string]Tokenizer{}
	for _, m := range builtinModels {
		tok, err := Load(m)
		if err != nil {
			f.Fatal(err)
		}
		toks[m] = tok
	}
	synth, err := ParseJSON(synthJSON(synthSpec{merges: [][2]string{{"a", "b"}, {" ", "t"}, {"\xe4", "\xb8"}}}), "synth.json")
	if err != nil {
		f.Fatal(err)
	}
	toks["synth"] = synth
	for _, m := range fixtureModels {
		p := clitest.FixturesDir() + "/" + m + "/tokenizer.json"
		if _, err := os.Stat(p); err != nil {
			continue
		}
		tok, err := Load(p)
		if err != nil {
			f.Fatal(err)
		}
		toks[m] = tok
	}
	return toks
}

// FuzzRoundTrip checks Decode(Encode(s)) == s (NFC-normalized for Qwen3,
// invalid UTF-8 replaced) and Count == len(Encode) on every tokenizer.
func FuzzRoundTrip(f *testing.F) {
	toks := roundTripTokenizers(f)
	for _, s := range goldenTexts() {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xc3")
	f.Fuzz(func(t *testing.T, s string) {
		for name, tok := range toks {
			ids := tok.Encode(s)
			want := wantDecoded(name, s)
			if got := tok.Decode(ids); got != want {
				t.Errorf("%s: Decode(Encode(%q)) = %q, want %q", name, s, got, want)
			}
			if n := tok.Count(s); n != len(ids) {
				t.Errorf("%s: Count(%q) = %d, len(Encode) = %d", name, s, n, len(ids))
			}
		}
	})
}

// FuzzMerge checks that the heap merge (long pieces) and the in-place merge
// (short pieces) agree, on the Qwen3 merges when the fixture exists and on
// synthetic merges otherwise.
func FuzzMerge(f *testing.F) {
	var tok *bpe
	if p := clitest.FixturesDir() + "/qwen3/tokenizer.json"; fileExists(p) {
		t, err := Load(p)
		if err != nil {
			f.Fatal(err)
		}
		tok = t.(*bpe)
	} else {
		t, err := ParseJSON(synthJSON(synthSpec{merges: [][2]string{{"a", "a"}, {"a", "b"}, {"aa", "b"}, {"b", "a"}, {"aab", "aa"}}}), "synth.json")
		if err != nil {
			f.Fatal(err)
		}
		tok = t.(*bpe)
	}
	f.Add("aaaaaaab abababab")
	f.Add("internationalization")
	f.Add("中文测试你好世界")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > smallPiece || !utf8.ValidString(s) {
			return
		}
		syms := make([]int32, len(s))
		for i := 0; i < len(s); i++ {
			syms[i] = tok.byteID[s[i]]
		}
		a := mergeSmall(tok.merges, slices.Clone(syms))
		b := mergeHeap(tok.merges, slices.Clone(syms))
		if !slices.Equal(a, b) {
			t.Fatalf("%q: small %v, heap %v", s, a, b)
		}
	})
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
