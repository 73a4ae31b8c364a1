package source

import (
	"bytes"
	"crypto/sha256"
	"io"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
)

// benchInput is n records of line(i), one a line.
func benchInput(n int, line func(i int) string) []byte {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i) + "\n")
	}
	return []byte(b.String())
}

// BenchmarkRead reads 2,000 conversations through Open (detection, the
// digest, the format) and, as the baseline, through conv.Reader alone
// with the SHA-256 of the input (what mtrun did before sources).
func BenchmarkRead(b *testing.B) {
	question := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	convs := benchInput(2000, func(i int) string {
		return `{"id":"c` + itoa(i) + `","messages":[{"role":"user","content":"` + question + `"},{"role":"assistant","content":"answer"},{"role":"user","content":"` + question + `"}]}`
	})
	sharegpt := benchInput(2000, func(i int) string {
		return `{"id":"s` + itoa(i) + `","conversations":[{"from":"human","value":"` + question + `"},{"from":"gpt","value":"answer"},{"from":"human","value":"` + question + `"}]}`
	})
	for _, tc := range []struct {
		name string
		data []byte
		read func(data []byte) (int, error)
	}{
		{"conv.Reader", convs, func(data []byte) (int, error) {
			h := sha256.New()
			r := conv.NewReader(io.TeeReader(bytes.NewReader(data), h), "bench")
			n := 0
			for r.Scan() {
				n++
			}
			h.Sum(nil)
			return n, r.Err()
		}},
		{"Open/conversations", convs, openAndRead},
		{"Open/sharegpt", sharegpt, openAndRead},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if n, err := tc.read(tc.data); err != nil || n != 2000 {
					b.Fatalf("%d sessions, %v", n, err)
				}
			}
		})
	}
}

func openAndRead(data []byte) (int, error) {
	in, err := Open("-", "", bytes.NewReader(data), Options{})
	if err != nil {
		return 0, err
	}
	defer in.Close()
	for _, ok := in.Next(); ok; _, ok = in.Next() {
	}
	if err := in.Err(); err != nil {
		return 0, err
	}
	_, err = in.Digest()
	return in.Sessions(), err
}

// BenchmarkMooncakeNext synthesizes the prompts of a Mooncake trace, as
// mtrun does when it reads a session (issue 26): 64 requests of 1,024 to
// 32,768 tokens (cycling, mean 8.3k), whose blocks are all new but the
// shared first one, in o200k_base. It reports the CPU time per session
// and per 1,000 prompt tokens.
func BenchmarkMooncakeNext(b *testing.B) {
	const n = 64
	sizes := []int{1024, 2048, 4096, 8192, 16384, 32768}
	next, tokens := 1, 0
	data := benchInput(n, func(i int) string {
		in := sizes[i%len(sizes)]
		tokens += in
		ids := "0"
		for range in/MooncakeBlockSize - 1 {
			ids += "," + itoa(next)
			next++
		}
		return `{"timestamp":0,"input_length":` + itoa(in) + `,"output_length":16,"hash_ids":[` + ids + `]}`
	})
	f, _ := Lookup("mooncake")
	b.ReportAllocs()
	for b.Loop() {
		src, err := f.Open(bytes.NewReader(data), "bench.jsonl", Options{Tokenizer: "o200k_base"})
		if err != nil {
			b.Fatal(err)
		}
		for range n {
			if _, ok := src.Next(); !ok {
				b.Fatal(src.Err())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e6, "ms/session")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tokens)*1e3/1e6, "ms/ktoken")
}
