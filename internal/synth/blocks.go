package synth

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"reflect"
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
// random sequences in the real tokenizers). A prompt also keeps its count
// after a newline (a chat template's "user\n") and before punctuation
// (a template's "<|im_end|>" in a tokenizer where it is plain text).
//
// Blocks are made lazily, when first asked for, and kept in an LRU cache
// bounded in bytes; an evicted block is made again, identically, from its
// id. Blocks is safe for concurrent use.
type Blocks struct {
	tok  Tokenizer
	size int
	seed uint64
	text string // the corpus
	// corpus is the corpus's tokens, found once (corpusTokensOf hashes
	// the whole text to find them: 28 % of the CPU of making blocks).
	corpus     *corpusTokens
	corpusOnce sync.Once

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

// cut returns the start of block id, whose text is full, as a text of
// exactly m tokens (m < Size) that, like a whole block, ends with a
// newline (or, for m = 1, is the tag's first token, letters): so
// punctuation after a prompt (a chat template's "<|im_end|>" where that
// is not a special token) does not merge with its end.
func (b *Blocks) cut(id uint64, full string, m int) (string, error) {
	ids := b.tok.Encode(full)
	var (
		t   string
		err error
	)
	if m == 1 {
		t = b.tok.Decode(ids[:1])
	} else {
		t, _, err = ExactTextTail(b.tok, "", 1, ids, m, "\n")
	}
	if err == nil && (!startsWithLetter(t) || b.tok.Count(t) != m) {
		err = fmt.Errorf("the cut %q does not start with a letter", t)
	}
	if err != nil {
		return "", fmt.Errorf("block %d cut to %d tokens: %w", id, m, err)
	}
	return t, nil
}

// make builds block id: its tag word, then corpus text from a word start
// picked by the id, then a newline, Size tokens in all.
func (b *Blocks) make(id uint64) (string, error) {
	b.corpusOnce.Do(func() { b.corpus = corpusTokensOf(b.tok, b.text) })
	ct := b.corpus
	if len(ct.starts) == 0 {
		return "", errors.New("synth: the corpus has no word starts")
	}
	need := b.size + b.size/8 + 16
	for attempt := uint64(0); attempt < 8; attempt++ {
		h := mix64(mix64(b.seed^0x5bd1e9955bd1e995) ^ mix64(id+attempt*0x9e3779b97f4a7c15))
		head := tagWord(h, min(6, max(1, b.size/4)))
		// The guess: the tag's tokens and one for the newline (exact when
		// the pieces do not merge, the common case: one count per block).
		t, c, err := ExactTextTail(b.tok, head, b.tok.Count(head)+1, ct.window(h, need), b.size, "\n")
		if err == nil && c == b.size && startsWithLetter(t) {
			return t, nil
		}
	}
	return "", fmt.Errorf("could not make block %d of exactly %d tokens", id, b.size)
}

// corpusTokens is a corpus encoded once per tokenizer, with the positions
// of the tokens that start a word (a space then a letter).
type corpusTokens struct {
	ids    []int
	starts []int32
}

// corpora caches the corpusTokens of each (comparable) tokenizer and text.
var corpora sync.Map // corpusKey -> *corpusEntry

type corpusKey struct {
	tok  any
	text string
}

type corpusEntry struct {
	once sync.Once
	ct   *corpusTokens
}

func corpusTokensOf(tok Tokenizer, text string) *corpusTokens {
	if !reflect.TypeOf(tok).Comparable() {
		return encodeCorpus(tok, text)
	}
	v, _ := corpora.LoadOrStore(corpusKey{tok, text}, &corpusEntry{})
	e := v.(*corpusEntry)
	e.once.Do(func() { e.ct = encodeCorpus(tok, text) })
	return e.ct
}

func encodeCorpus(tok Tokenizer, text string) *corpusTokens {
	s := NewStream(tok, text)
	s.Ensure(math.MaxInt)
	ct := &corpusTokens{ids: s.IDs()}
	for i, id := range ct.ids {
		t := tok.Decode([]int{id})
		if len(t) >= 2 && t[0] == ' ' {
			if r, _ := utf8.DecodeRuneInString(t[1:]); unicode.IsLetter(r) {
				ct.starts = append(ct.starts, int32(i))
			}
		}
	}
	return ct
}

// window returns n tokens of the corpus from the word start picked by h
// (the corpus repeated when it is short).
func (ct *corpusTokens) window(h uint64, n int) []int {
	p := int(ct.starts[h%uint64(len(ct.starts))])
	if p+n <= len(ct.ids) {
		return ct.ids[p : p+n : p+n]
	}
	out := make([]int, 0, n)
	out = append(out, ct.ids[p:]...)
	for len(out) < n {
		out = append(out, ct.ids[int(ct.starts[0]):]...)
	}
	return out[:n]
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
