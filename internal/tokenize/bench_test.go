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
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		b.Skipf("corpus: %v", err)
	}
	return strings.Repeat(string(data), 2<<20/len(data)+1)
}

// BenchmarkEncode reports tokens/s on one goroutine for the default
// built-in encodings and the Qwen3 and Llama-3 tokenizer.json files.
func BenchmarkEncode(b *testing.B) {
	corpus := benchCorpus(b)
	for _, model := range []string{"o200k_base", "cl100k_base", "qwen3", "llama3"} {
		b.Run(model, func(b *testing.B) {
			tok, err := Load(specFor(b, model))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += len(tok.Encode(corpus))
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkCount is BenchmarkEncode for Count.
func BenchmarkCount(b *testing.B) {
	corpus := benchCorpus(b)
	for _, model := range []string{"o200k_base", "cl100k_base", "qwen3"} {
		b.Run(model, func(b *testing.B) {
			tok, err := Load(specFor(b, model))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += tok.Count(corpus)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
