package tokenize

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchCorpus returns about 2 MB of English: Newton's Opticks (shipped with
// Go) repeated.
func benchCorpus(b *testing.B) string {
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
