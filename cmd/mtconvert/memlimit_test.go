package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/mtkit/mtkit/internal/convert"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// TestLimitMemory checks when mtconvert sets its soft memory limit: a
// streaming run with a tokenizer, unless the user set GOMEMLIMIT or GOGC.
// Not parallel: the limit is the process's.
func TestLimitMemory(t *testing.T) {
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tc := range []struct {
		name string
		opts convert.Options
		env  map[string]string
		want int64
	}{
		{"tokenizer", convert.Options{Tokenizer: tok}, nil, 48 << 20},
		{"no tokenizer", convert.Options{}, nil, 0},
		{"max items hold conversations", convert.Options{Tokenizer: tok, MaxItems: 10}, nil, 0},
		{"parts all holds the input", convert.Options{Tokenizer: tok, Parts: convert.PartsAll}, nil, 0},
		{"user GOMEMLIMIT", convert.Options{Tokenizer: tok}, map[string]string{"GOMEMLIMIT": "1GiB"}, 0},
		{"user GOGC", convert.Options{Tokenizer: tok}, map[string]string{"GOGC": "200"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			got := limitMemory(&tc.opts, func(k string) string { return tc.env[k] })
			if got != tc.want {
				t.Errorf("limitMemory = %d, want %d", got, tc.want)
			}
			want := tc.want
			if want == 0 {
				want = math.MaxInt64
			}
			if cur := debug.SetMemoryLimit(-1); cur != want {
				t.Errorf("runtime limit %d, want %d", cur, want)
			}
		})
	}
}
