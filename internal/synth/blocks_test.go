package synth

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// testTokenizers returns the built-in encodings and, when scripts/fixtures.sh
// has fetched them, the Qwen3 and Llama 3 tokenizer.json files.
func testTokenizers(t *testing.T) map[string]tokenize.Tokenizer {
	t.Helper()
	out := map[string]tokenize.Tokenizer{}
	for _, spec := range []string{"o200k_base", "cl100k_base"} {
		tok, err := tokenize.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		out[spec] = tok
	}
	dir := clitest.FixturesDir()
	for _, m := range []string{"qwen3", "llama3"} {
		p := filepath.Join(dir, m, "tokenizer.json")
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("MTKIT_REQUIRE_FIXTURES") == "1" {
				t.Fatalf("fixture %s missing: run scripts/fixtures.sh", p)
			}
			t.Logf("fixture %s missing: checking the built-in encodings only", p)
			continue
		}
		tok, err := tokenize.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		out[m] = tok
	}
	return out
}

// testCorpus is the first 200 KB of the embedded corpus: the properties
// tested do not depend on its size, and encoding it in four tokenizers
// is quick.
var testCorpus = EmbeddedCorpus()[:200_000]

// TestBlockShape checks each block: exactly Size tokens, a letter first, a
// newline last, the same text for the same id (also from a second Blocks
// and after eviction) and different texts for different ids.
func TestBlockShape(t *testing.T) {
	for name, tok := range testTokenizers(t) {
		for _, size := range []int{4, 16, 512} {
			b1, err := NewBlocksFrom(tok, size, 7, 0, testCorpus)
			if err != nil {
				t.Fatal(err)
			}
			b2, _ := NewBlocksFrom(tok, size, 7, 1, testCorpus) // a cache too small for any block
			seen := map[string]uint64{}
			nids := uint64(20)
			if size > 100 {
				nids = 6
			}
			for id := range nids {
				id := id * 7919
				s1, err := b1.Block(id)
				if err != nil {
					t.Fatalf("%s size %d block %d: %v", name, size, id, err)
				}
				s2, err := b2.Block(id)
				if err != nil {
					t.Fatal(err)
				}
				if s1 != s2 {
					t.Fatalf("%s size %d block %d differs between two Blocks:\n%q\n%q", name, size, id, s1, s2)
				}
				if c := tok.Count(s1); c != size {
					t.Errorf("%s block %d: %d tokens, want %d: %q", name, id, c, size, s1)
				}
				if !startsWithLetter(s1) || !strings.HasSuffix(s1, "\n") {
					t.Errorf("%s block %d does not start with a letter and end with a newline: %q", name, id, s1)
				}
				if prev, dup := seen[s1]; dup && size >= 16 {
					t.Errorf("%s size %d: blocks %d and %d are the same text", name, size, prev, id)
				}
				seen[s1] = id
			}
			if st := b2.Stats(); st.CachedBytes != 0 || st.Hits != 0 {
				t.Errorf("a 1-byte cache holds %+v", st)
			}
		}
	}
}

// TestPromptConcatenation is the property trace replay rests on: over many
// random block sequences (shared prefixes, repeats, a cut last block), the
// prompt's tokens are exactly the tokens of its blocks in order, so equal
// leading hash ids give equal leading tokens on the server, and the
// prompt has exactly n tokens.
func TestPromptConcatenation(t *testing.T) {
	for name, tok := range testTokenizers(t) {
		for _, size := range []int{16, 64} {
			b, err := NewBlocksFrom(tok, size, 42, 0, testCorpus)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, uint64(size)))
			for trial := range 60 {
				k := 1 + r.IntN(8)
				ids := make([]uint64, k)
				for i := range ids {
					ids[i] = uint64(r.IntN(60)) // a small pool: many shared and repeated blocks
				}
				n := (k-1)*size + 1 + r.IntN(size)
				p, err := b.Prompt(ids, n)
				if err != nil {
					t.Fatalf("%s trial %d: %v", name, trial, err)
				}
				got := tok.Encode(p)
				if len(got) != n {
					t.Fatalf("%s size %d trial %d ids %v: %d tokens, want %d", name, size, trial, ids, len(got), n)
				}
				var want []int
				for _, id := range ids[:k-1] {
					s, _ := b.Block(id)
					want = append(want, tok.Encode(s)...)
				}
				if !slices.Equal(got[:len(want)], want) {
					t.Fatalf("%s size %d trial %d ids %v: the tokens of the full blocks are not the blocks' tokens", name, size, trial, ids)
				}
				// Inside a chat template ("<|im_start|>user\n" + content +
				// "<|im_end|>\n", plain text in o200k and cl100k) the
				// prompt keeps its count.
				const before, after = "<|im_start|>user\n", "<|im_end|>\n"
				if c := tok.Count(before + p + after); c != tok.Count(before)+n+tok.Count(after) {
					t.Fatalf("%s trial %d: %d tokens in a chat template, want %d + %d + %d", name, trial, c, tok.Count(before), n, tok.Count(after))
				}
			}
		}
	}
}

// TestPromptPrefix checks that two prompts sharing their first j ids share
// their first j*Size tokens, whatever follows.
func TestPromptPrefix(t *testing.T) {
	tok, _ := tokenize.Load("")
	b, _ := NewBlocksFrom(tok, 32, 3, 0, testCorpus)
	a, _ := b.Prompt([]uint64{5, 6, 7, 8}, 4*32-5)
	c, _ := b.Prompt([]uint64{5, 6, 9}, 3*32)
	ta, tc := tok.Encode(a), tok.Encode(c)
	common := 0
	for common < min(len(ta), len(tc)) && ta[common] == tc[common] {
		common++
	}
	if common < 64 || common >= 96 {
		t.Errorf("prompts sharing 2 blocks of 32 share %d tokens, want 64 to 95", common)
	}
}

// TestBlocksCacheBound checks the LRU: the cached text stays within the
// budget, blocks are evicted, and a block made again is identical.
func TestBlocksCacheBound(t *testing.T) {
	tok, _ := tokenize.Load("")
	b, _ := NewBlocksFrom(tok, 64, 1, 4096, testCorpus)
	first, _ := b.Block(0)
	for id := uint64(1); id < 50; id++ {
		if _, err := b.Block(id); err != nil {
			t.Fatal(err)
		}
		if st := b.Stats(); st.CachedBytes > 4096 {
			t.Fatalf("cache holds %d bytes, budget 4096", st.CachedBytes)
		}
	}
	st := b.Stats()
	if st.Evicted == 0 || st.Made != 50 || st.Hits != 0 {
		t.Errorf("stats %+v: want 50 made, some evicted", st)
	}
	again, _ := b.Block(0)
	if again != first {
		t.Error("block 0 made again differs")
	}
	b.Block(0)
	if st := b.Stats(); st.Hits != 1 {
		t.Errorf("hits %d, want 1", st.Hits)
	}
}

func TestPromptErrors(t *testing.T) {
	tok, _ := tokenize.Load("")
	b, _ := NewBlocksFrom(tok, 16, 1, 0, testCorpus)
	for _, tc := range []struct {
		ids []uint64
		n   int
	}{{nil, 1}, {[]uint64{1}, 0}, {[]uint64{1}, 17}, {[]uint64{1, 2}, 16}} {
		if _, err := b.Prompt(tc.ids, tc.n); err == nil {
			t.Errorf("Prompt(%v, %d): no error", tc.ids, tc.n)
		}
	}
	if _, err := NewBlocks(tok, 3, 1, 0); err == nil {
		t.Error("block size 3: no error")
	}
	if _, err := NewBlocksFrom(tok, 16, 1, 0, "123 456"); err == nil {
		t.Error("a corpus without letters: no error")
	}
}

// TestUnique checks prompts without hash ids: exact counts, and no two
// keys sharing a first block.
func TestUnique(t *testing.T) {
	tok, _ := tokenize.Load("")
	b, _ := NewBlocksFrom(tok, 512, 9, 0, testCorpus)
	firsts := map[string]bool{}
	for key, n := range []int{1, 5, 511, 512, 513, 1500} {
		p, err := b.Unique(uint64(key), n)
		if err != nil {
			t.Fatal(err)
		}
		if c := tok.Count(p); c != n {
			t.Errorf("key %d: %d tokens, want %d", key, c, n)
		}
		head := p[:min(len(p), 12)]
		if firsts[head] {
			t.Errorf("key %d: first words %q seen before", key, head)
		}
		firsts[head] = true
	}
	if b.Stats().CachedBytes != 0 {
		t.Error("unique blocks were cached")
	}
}

// TestWalkerNeverRealigns: after the corpus is exhausted, a walk of equal
// windows starts each window at a token no earlier window started at,
// until every start is used (issue 23: the walk restarted at 0 and
// repeated the first pass's windows).
func TestWalkerNeverRealigns(t *testing.T) {
	t.Parallel()
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	src := NewStream(tok, strings.Repeat("It was a bright cold day in April, and the clocks were striking thirteen. ", 3))
	src.Ensure(1 << 20)
	total := len(src.IDs())
	const n = 7
	w := Walker{Src: src}
	starts := map[int]bool{}
	fits := total - n + 1 // starts a window of n tokens fits at
	for i := range fits {
		win := w.Take(n)
		if len(win) != n {
			t.Fatalf("window %d: %d tokens", i, len(win))
		}
		p := w.pos - n
		if starts[p] {
			t.Fatalf("window %d starts at %d again (wraps %d)", i, p, w.Wraps())
		}
		starts[p] = true
	}
	if w.Wraps() < 2 || w.Reused() != 0 {
		t.Fatalf("wraps %d, reused %d", w.Wraps(), w.Reused())
	}
	w.Take(n)
	if w.Reused() != 1 {
		t.Errorf("the window after every start was used: reused %d, want 1", w.Reused())
	}
}
