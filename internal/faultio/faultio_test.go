package faultio

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

func TestFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		n      int
		writes []string
		want   string
		failAt int // index of the first failing write; -1 none
	}{
		{"fits", 6, []string{"abc", "def"}, "abcdef", -1},
		{"cut", 4, []string{"abc", "def", "g"}, "abcd", 1},
		{"full", 0, []string{"a"}, "", 0},
	} {
		var buf bytes.Buffer
		w := &FullDisk{W: &buf, N: tc.n}
		failed := -1
		for i, s := range tc.writes {
			if _, err := w.Write([]byte(s)); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("%s: %v", tc.name, err)
				}
				if failed < 0 {
					failed = i
				}
			}
		}
		if buf.String() != tc.want || failed != tc.failAt {
			t.Errorf("%s: wrote %q, first failure %d; want %q, %d", tc.name, buf.String(), failed, tc.want, tc.failAt)
		}
	}
}
