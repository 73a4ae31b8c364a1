package tokenize

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/cputime"
)

// benchCorpus returns about 2 MB of English: Newton's Opticks (shipped with
// Go) repeated.
func benchCorpus(b testing.TB) string {
	b.Helper()
	//lint:ignore SA1019 tests run with the toolchain, whose GOROOT holds the file
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		b.Skipf("corpus: %v", err)
	}
	return strings.Repeat(string(data), 2<<20/len(data)+1)
}

// benchTokens loads the tokenizer of spec and reports tokens/s of count
// over corpus.
func benchTokens(b *testing.B, spec, corpus string, count func(Tokenizer, string) int) {
	b.Helper()
	tok, err := Load(spec)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(corpus)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += count(tok, corpus)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}

// encodeLen is the number of tokens of Encode.
func encodeLen(tok Tokenizer, s string) int { return len(tok.Encode(s)) }

// BenchmarkEncode reports tokens/s on one goroutine for the default
// built-in encodings and the Qwen3 and Llama-3 tokenizer.json files.
func BenchmarkEncode(b *testing.B) {
	corpus := benchCorpus(b)
	for _, model := range []string{"o200k_base", "cl100k_base", "qwen3", "llama3"} {
		b.Run(model, func(b *testing.B) {
			benchTokens(b, specFor(b, model), corpus, encodeLen)
		})
	}
}

// BenchmarkCount is BenchmarkEncode for Count.
func BenchmarkCount(b *testing.B) {
	corpus := benchCorpus(b)
	for _, model := range []string{"o200k_base", "cl100k_base", "qwen3"} {
		b.Run(model, func(b *testing.B) {
			benchTokens(b, specFor(b, model), corpus, Tokenizer.Count)
		})
	}
}

// BenchmarkEncodeMixed is BenchmarkEncode for the built-in encodings on
// about 1 MB of mixed-script text (CJK runs without spaces, emoji, marks,
// code), where fewer pieces repeat than in English prose.
func BenchmarkEncodeMixed(b *testing.B) {
	corpus := mixedCorpus(1 << 20)
	for _, model := range builtinModels {
		b.Run(model, func(b *testing.B) {
			benchTokens(b, model, corpus, encodeLen)
		})
	}
}

// BenchmarkTiktokenGo runs the previous implementation of the built-in
// encodings (github.com/tiktoken-go/tokenizer's own regexp2 split and merge
// loop, now the reference of the tests) on the corpora of BenchmarkEncode
// and BenchmarkEncodeMixed, for comparison in the same run.
func BenchmarkTiktokenGo(b *testing.B) {
	corpora := map[string]string{"english": benchCorpus(b), "mixed": mixedCorpus(1 << 20)}
	for _, name := range []string{"english", "mixed"} {
		corpus := corpora[name]
		for _, model := range builtinModels {
			b.Run(name+"/"+model, func(b *testing.B) {
				ref := tiktokenRefFor(b, model)
				b.SetBytes(int64(len(corpus)))
				n := 0
				for b.Loop() {
					n += len(ref.encode(b, corpus))
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// noSpaceCorpus returns n bytes of text without white space or digits, so
// that the pre-tokenizers make one piece of it: random letters (kind
// "letters") or one repeated letter ("repeat").
func noSpaceCorpus(kind string, n int) string {
	if kind == "repeat" {
		return strings.Repeat("x", n)
	}
	r := rand.New(rand.NewPCG(7, 7))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// BenchmarkEncodeNoSpace reports the cost per MB of 1 MB of text without
// white space (one pre-token, the pathological case) next to 1 MB of
// English, for every tokenizer: B/op and ns/op are per MB.
func BenchmarkEncodeNoSpace(b *testing.B) {
	english := benchCorpus(b)[:1<<20]
	corpora := []struct{ name, text string }{
		{"letters", noSpaceCorpus("letters", 1<<20)},
		{"repeat", noSpaceCorpus("repeat", 1<<20)},
		{"english", english},
	}
	for _, model := range []string{"o200k_base", "cl100k_base", "qwen3", "llama3"} {
		for _, c := range corpora {
			b.Run(model+"/"+c.name, func(b *testing.B) {
				spec := specFor(b, model)
				if _, err := Load(spec); err != nil { // loaded outside the timing
					b.Fatal(err)
				}
				start := cputime.Process()
				benchTokens(b, spec, c.text, encodeLen)
				// CPU time (all threads, GC included) is steadier than
				// ns/op on a loaded machine.
				b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkBuiltinLoad measures building a built-in encoding (each id
// decoded once into the vocabulary table), which every mtrun and mtgen
// start pays: time and allocation per load.
func BenchmarkBuiltinLoad(b *testing.B) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := newBuiltin(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCountMessage is the per-call cost of Count on the texts mtrun
// counts each turn: a 32-token answer and a 100-word user message, cut from
// the English corpus at word boundaries (pieces mostly in the cache, as in
// a long run). ns/op and allocs/op are per call.
func BenchmarkCountMessage(b *testing.B) {
	words := strings.Fields(benchCorpus(b)[10000:20000])
	texts := []struct{ name, text string }{
		{"answer32", strings.Join(words[:27], " ")},
		{"message100", strings.Join(words[100:200], " ")},
	}
	for _, model := range []string{"o200k_base", "cl100k_base", "qwen3"} {
		for _, x := range texts {
			b.Run(model+"/"+x.name, func(b *testing.B) {
				tok, err := Load(specFor(b, model))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				n := tok.Count(x.text) // fills the piece cache
				for b.Loop() {
					tok.Count(x.text)
				}
				b.ReportMetric(float64(n), "tokens")
			})
		}
	}
}
