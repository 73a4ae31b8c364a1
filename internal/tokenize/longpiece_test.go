package tokenize

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestLongPieceBounded checks that a long run of text with no white space
// (one pre-token) costs memory in proportion to its length with a small
// constant: before pieces were cut at maxPiece and the merge arrays were
// reused, 256 KB of "x" allocated about 85 bytes per byte of text.
func TestLongPieceBounded(t *testing.T) {
	for _, model := range builtinModels {
		tok, err := Load(model)
		if err != nil {
			t.Fatal(err)
		}
		// Under -race the allocation bound is not checked (below), and the
		// round trip of pieces over maxPiece needs a few of them, not 8.
		n := 256 << 10
		if raceEnabled {
			n = 3*maxPiece + 17
		}
		for _, s := range []string{strings.Repeat("x", n), strings.Repeat("=", n)} {
			tok.Encode(s[:maxPiece+1]) // warm the scratch pool
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ids := tok.Encode(s)
			runtime.ReadMemStats(&after)
			perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(s))
			if perByte > 16 && !raceEnabled {
				t.Errorf("%s: %q×%d: %.1f bytes allocated per byte of text, want ≤ 16", model, s[:1], len(s), perByte)
			}
			if tok.Decode(ids) != s {
				t.Errorf("%s: %q×%d does not round-trip", model, s[:1], len(s))
			}
		}
	}
}

// TestLongPieceChunks checks what the cap means: a piece longer than
// maxPiece is encoded as its chunks of maxPiece bytes cut at character
// boundaries.
func TestLongPieceChunks(t *testing.T) {
	t.Parallel()
	for _, model := range builtinModels {
		tok, err := Load(model)
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("é", maxPiece/2+100) // 2-byte runes: the cut moves back to a rune start
		cut := maxPiece
		if maxPiece%2 != 0 {
			cut--
		}
		want := slices.Concat(tok.Encode(long[:cut]), tok.Encode(long[cut:]))
		if got := tok.Encode(long); !slices.Equal(got, want) || tok.Decode(got) != long {
			t.Errorf("%s: a %d-byte piece is not encoded as its two chunks", model, len(long))
		}
	}
}
