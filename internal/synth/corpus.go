package synth

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
)

// corpusFS holds the embedded public-domain corpus (see corpus/README.md).
//
//go:embed corpus/*.txt
var corpusFS embed.FS

// EmbeddedCorpus returns the embedded corpus: the files of corpus/ in name
// order, separated by a blank line.
func EmbeddedCorpus() string {
	ents, err := corpusFS.ReadDir("corpus")
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		b, err := corpusFS.ReadFile("corpus/" + n)
		if err == nil {
			parts = append(parts, CleanText(string(b)))
		}
	}
	return strings.Join(parts, "\n\n")
}

// LoadCorpus reads the text files (or the embedded corpus when there are
// none) into one text.
func LoadCorpus(files []string) (string, error) {
	if len(files) == 0 {
		return EmbeddedCorpus(), nil
	}
	parts := make([]string, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("text file: %w", err)
		}
		if t := CleanText(string(b)); strings.TrimSpace(t) != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "", errors.New("text files: no text in " + strings.Join(files, ", "))
	}
	return strings.Join(parts, "\n\n"), nil
}

// CleanText drops a byte-order mark, turns CRLF into LF, replaces invalid
// UTF-8 and NUL bytes, and trims surrounding blank space.
func CleanText(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\x00", "")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.TrimSpace(s)
}

// chunkBytes is the size of the pieces the corpus is encoded in, on
// demand, so a small run does not encode the whole corpus.
const chunkBytes = 32 << 10

// Stream is the corpus as a token stream, encoded chunk by chunk as far as
// it is read. Chunks end after a blank line where possible.
type Stream struct {
	tok  Tokenizer
	text string
	next int   // byte offset of the first chunk not encoded yet
	ids  []int // tokens of text[:next]
}

// NewStream returns the token stream of text in tok; nothing is encoded
// until Ensure asks for it.
func NewStream(tok Tokenizer, text string) *Stream {
	return &Stream{tok: tok, text: text}
}

// IDs returns the tokens encoded so far. The result must not be modified.
func (s *Stream) IDs() []int { return s.ids }

// done reports whether the whole corpus is encoded.
func (s *Stream) done() bool { return s.next >= len(s.text) }

// Ensure encodes chunks until at least n tokens are available or the
// corpus is exhausted.
func (s *Stream) Ensure(n int) {
	for len(s.ids) < n && !s.done() {
		end := s.next + chunkBytes
		if end >= len(s.text) {
			end = len(s.text)
		} else if i := strings.Index(s.text[end:], "\n\n"); i >= 0 && i < chunkBytes {
			end += i + 2
			for end < len(s.text) && s.text[end] == '\n' {
				end++
			}
		} else {
			for end < len(s.text) && !utf8.RuneStart(s.text[end]) {
				end++
			}
		}
		s.ids = append(s.ids, s.tok.Encode(s.text[s.next:end])...)
		s.next = end
	}
}

// Walker hands out windows of the corpus token stream in order. When the
// rest of the corpus is too short for the next window the walk starts
// over, and from then on every window starts at a token no earlier window
// started at: the offsets of a later pass never realign with those of an
// earlier one, so two windows never hold the same text (issue 23: with
// realigned offsets, 2,400 messages held 1,130 distinct texts). Only when
// every start has been used do starts repeat.
type Walker struct {
	// Src is the stream walked.
	Src    *Stream
	pos    int
	wraps  int
	used   []uint64 // bit i: a window started at token i
	reused int      // windows taken since every start was used
	spent  bool     // every start was used once
}

// Wraps returns how many times the walk started over.
func (w *Walker) Wraps() int { return w.wraps }

// Reused returns how many windows started at a token an earlier window
// started at (only once every start of the corpus was used).
func (w *Walker) Reused() int { return w.reused }

func (w *Walker) isUsed(i int) bool {
	return i/64 < len(w.used) && w.used[i/64]&(1<<(i%64)) != 0
}

func (w *Walker) mark(i int) {
	for i/64 >= len(w.used) {
		w.used = append(w.used, 0)
	}
	w.used[i/64] |= 1 << (i % 64)
}

// Take reserves the next n tokens. The result must not be modified.
func (w *Walker) Take(n int) []int {
	if n <= 0 {
		return nil
	}
	w.Src.Ensure(w.pos + n)
	ids := w.Src.ids
	if w.wraps == 0 && w.pos+n <= len(ids) {
		w.mark(w.pos)
		out := ids[w.pos : w.pos+n : w.pos+n]
		w.pos += n
		return out
	}
	// The corpus is exhausted (Ensure encoded all of it).
	total := len(ids)
	if total == 0 {
		return nil
	}
	if n > total {
		// A window longer than the whole corpus repeats it.
		w.wraps++
		out := make([]int, n)
		for i := range out {
			out[i] = ids[(w.pos+i)%total]
		}
		w.wraps += (w.pos + n) / total
		w.pos = (w.pos + n) % total
		return out
	}
	p := w.free(n, total)
	w.mark(p)
	if w.spent {
		w.reused++
	}
	w.pos = p + n
	return ids[p : p+n : p+n]
}

// free returns the first start at or after pos, walking over the end to
// the beginning of the corpus, that no window started at and leaves room
// for n tokens. When there is none, every start may be used again.
func (w *Walker) free(n, total int) int {
	p := w.pos
	for range total + 1 {
		if p+n > total {
			w.wraps++
			p = 0
		}
		if !w.isUsed(p) {
			return p
		}
		p++
	}
	// Every start that fits a window of n tokens is used: start afresh.
	clear(w.used)
	w.spent = true
	return 0
}
