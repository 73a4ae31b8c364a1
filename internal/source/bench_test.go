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
