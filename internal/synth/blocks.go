package synth

import (
	"container/list"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// DefaultCacheBytes is the default budget of the Blocks cache.
const DefaultCacheBytes = 64 << 20

// Blocks makes the token blocks of trace prompts. A trace such as
// Mooncake's gives each request's prompt as a list of block hash ids
// (equal ids: equal content, so a shared prefix of ids is a reusable
// prefix cache); Blocks turns each id into a text of exactly Size tokens
// in the tokenizer, the same text for the same id every time, and a
// prompt into the concatenation of its blocks.
//
// Concatenation does not merge tokens across blocks: every block starts
// with a letter (a unique tag word made from its id) and ends with a
// newline, and no pre-tokenizer piece of the GPT-2, cl100k, o200k,
// Llama 3 or Qwen patterns spans a newline followed by a letter, so the
// tokens of a concatenation are the blocks' tokens in order (tested over
// random sequences in the real tokenizers).
//
// Blocks are made lazily, when first asked for, and kept in an LRU cache
// bounded in bytes; an evicted block is made again, identically, from its
// id. Blocks is safe for concurrent use.
type Blocks struct {
	tok  Tokenizer
	size int
	seed uint64
	text string // the corpus

	mu         sync.Mutex
	cache      map[uint64]*list.Element
	lru        list.List // of *cached, front = most recent
	bytes      int
	cacheBytes int
	stats      BlockStats
}

type cached struct {
	id   uint64
	text string
}

// BlockStats counts the work of a Blocks.
type BlockStats struct {
	Made, Hits, Evicted int
	// CachedBytes is the text held in the cache now.
	CachedBytes int
}

// NewBlocks returns the blocks of size tokens in tok, seeded by seed, cut
// from the embedded corpus, with a cache of cacheBytes (0 means
// DefaultCacheBytes).
func NewBlocks(tok Tokenizer, size int, seed uint64, cacheBytes int) (*Blocks, error) {
	return NewBlocksFrom(tok, size, seed, cacheBytes, EmbeddedCorpus())
}

// NewBlocksFrom is NewBlocks over the corpus text.
func NewBlocksFrom(tok Tokenizer, size int, seed uint64, cacheBytes int, text string) (*Blocks, error) {
	if tok == nil {
		return nil, errors.New("synth: no tokenizer")
	}
	if size < 4 {
		return nil, fmt.Errorf("synth: block size %d is less than 4 (a tag word, text and a newline)", size)
	}
	if !strings.ContainsFunc(text, unicode.IsLetter) {
		return nil, errors.New("synth: the corpus has no letters")
	}
	if cacheBytes <= 0 {
		cacheBytes = DefaultCacheBytes
	}
	return &Blocks{tok: tok, size: size, seed: seed, text: text, cacheBytes: cacheBytes, cache: map[uint64]*list.Element{}}, nil
}

// Size returns the tokens per block.
func (b *Blocks) Size() int { return b.size }

// Stats returns the counts so far.
func (b *Blocks) Stats() BlockStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.stats
	s.CachedBytes = b.bytes
	return s
}

// Block returns the text of block id: exactly Size tokens, starting with
// a letter and ending with a newline.
func (b *Blocks) Block(id uint64) (string, error) {
	b.mu.Lock()
	if e, ok := b.cache[id]; ok {
		b.lru.MoveToFront(e)
		b.stats.Hits++
		b.mu.Unlock()
		return e.Value.(*cached).text, nil
	}
	b.mu.Unlock()
	t, err := b.make(id)
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stats.Made++
	if _, ok := b.cache[id]; !ok && len(t) <= b.cacheBytes {
		b.cache[id] = b.lru.PushFront(&cached{id: id, text: t})
		b.bytes += len(t)
		for b.bytes > b.cacheBytes {
			e := b.lru.Back()
			c := e.Value.(*cached)
			b.lru.Remove(e)
			delete(b.cache, c.id)
			b.bytes -= len(c.text)
			b.stats.Evicted++
		}
	}
	return t, nil
}

// Prompt returns the concatenation of the blocks ids, the last one cut so
// that the whole is exactly n tokens. It needs (len(ids)-1)*Size < n <=
// len(ids)*Size.
func (b *Blocks) Prompt(ids []uint64, n int) (string, error) {
	if n < 1 || n > len(ids)*b.size || n <= (len(ids)-1)*b.size {
		return "", fmt.Errorf("%d tokens do not fill %d blocks of %d", n, len(ids), b.size)
	}
	return b.join(ids, n, b.Block)
}

// Unique returns a prompt of exactly n tokens that no other key shares
// (blocks key<<24 + 0, 1, ...; not cached, as they are not used again).
func (b *Blocks) Unique(key uint64, n int) (string, error) {
	if n < 1 {
		return "", fmt.Errorf("%d tokens: want at least 1", n)
	}
	ids := make([]uint64, (n+b.size-1)/b.size)
	for j := range ids {
		ids[j] = key<<24 | uint64(j)
	}
	return b.join(ids, n, b.make)
}

// join concatenates the blocks ids, got by get, cutting the last to make
// n tokens in all.
func (b *Blocks) join(ids []uint64, n int, get func(uint64) (string, error)) (string, error) {
	var sb strings.Builder
	for i, id := range ids {
		t, err := get(id)
		if last := n - i*b.size; err == nil && last < b.size {
			t, err = b.cut(id, t, last)
		}
		if err != nil {
			return "", err
		}
		if i == 0 {
			sb.Grow(len(t) * len(ids))
		}
		sb.WriteString(t)
	}
	return sb.String(), nil
}

// cut returns the first m tokens (m < Size) of block id, whose text is
// full, as a text of exactly m tokens, starting as the block starts.
func (b *Blocks) cut(id uint64, full string, m int) (string, error) {
	t, _, err := ExactText(b.tok, "", 0, b.tok.Encode(full), m)
	if err != nil {
		return "", fmt.Errorf("block %d cut to %d tokens: %w", id, m, err)
	}
	return t, nil
}

// make builds block id: its tag word, then corpus text from a word start
// picked by the id, then a newline, Size tokens in all.
func (b *Blocks) make(id uint64) (string, error) {
	for attempt := uint64(0); attempt < 8; attempt++ {
		h := mix64(mix64(b.seed^0x5bd1e9955bd1e995) ^ mix64(id+attempt*0x9e3779b97f4a7c15))
		head := tagWord(h, min(6, max(1, b.size/4))) + " "
		win := b.window(h, b.size+b.size/8+16)
		t, c, err := ExactTextTail(b.tok, head, 4, win, b.size, "\n")
		if err == nil && c == b.size && startsWithLetter(t) {
			return t, nil
		}
	}
	return "", fmt.Errorf("could not make block %d of exactly %d tokens", id, b.size)
}

// window returns at least n tokens of corpus text starting at a word start
// chosen by h (the corpus repeated when it is short).
func (b *Blocks) window(h uint64, n int) []int {
	text := b.text
	off := wordStart(text, int(h%uint64(len(text))))
	nb := n*6 + 64
	for {
		end := off + nb
		var s string
		if end <= len(text) {
			for end < len(text) && !utf8.RuneStart(text[end]) {
				end++
			}
			s = text[off:end]
		} else {
			var sb strings.Builder
			sb.WriteString(text[off:])
			for sb.Len() < nb {
				sb.WriteString("\n\n")
				sb.WriteString(text)
			}
			s = sb.String()
		}
		ids := b.tok.Encode(s)
		if len(ids) >= n || nb > 64*n+(1<<20) {
			return ids
		}
		nb *= 2
	}
}

// wordStart returns the first offset at or after off (wrapping to the
// start) of a letter that follows a space or newline.
func wordStart(text string, off int) int {
	for range 2 {
		for i := off; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLetter(r) && (i == 0 || text[i-1] == ' ' || text[i-1] == '\n') {
				return i
			}
			i += size
		}
		off = 0
	}
	return 0
}

func startsWithLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// tagWord is a pronounceable word of n syllables drawn from h,
// capitalised: with six syllables (blocks of 24 tokens or more), unique
// per block in practice (7*10^11 words).
func tagWord(h uint64, n int) string {
	const cons, vows = "bcdfghjklmnprstvwxz", "aeiou"
	var sb strings.Builder
	for i := range n {
		c := cons[h%uint64(len(cons))]
		h /= uint64(len(cons))
		if i == 0 {
			c -= 'a' - 'A'
		}
		sb.WriteByte(c)
		sb.WriteByte(vows[h%uint64(len(vows))])
		h /= uint64(len(vows))
	}
	return sb.String()
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
