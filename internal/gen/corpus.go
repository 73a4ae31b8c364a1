package gen

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
			parts = append(parts, cleanText(string(b)))
		}
	}
	return strings.Join(parts, "\n\n")
}

// loadCorpus reads the text files (or the embedded corpus when there are
// none) into one text.
func loadCorpus(files []string) (string, error) {
	if len(files) == 0 {
		return EmbeddedCorpus(), nil
	}
	parts := make([]string, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("text file: %w", err)
		}
		if t := cleanText(string(b)); strings.TrimSpace(t) != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "", errors.New("text files: no text in " + strings.Join(files, ", "))
	}
	return strings.Join(parts, "\n\n"), nil
}

// cleanText drops a byte-order mark, turns CRLF into LF, replaces invalid
// UTF-8 and NUL bytes, and trims surrounding blank space.
func cleanText(s string) string {
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

// source is the corpus as a token stream, encoded chunk by chunk as far as
// it is read. Chunks end after a blank line where possible.
type source struct {
	tok  Tokenizer
	text string
	next int   // byte offset of the first chunk not encoded yet
	ids  []int // tokens of text[:next]
}

func newSource(tok Tokenizer, text string) *source {
	return &source{tok: tok, text: text}
}

// done reports whether the whole corpus is encoded.
func (s *source) done() bool { return s.next >= len(s.text) }

// ensure encodes chunks until at least n tokens are available or the
// corpus is exhausted.
func (s *source) ensure(n int) {
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

// walker hands out disjoint windows of the corpus token stream in order,
// starting over at the beginning only when the rest of the corpus is too
// short for the next window.
type walker struct {
	src   *source
	pos   int
	wraps int
}

// take reserves the next n tokens. The result must not be modified.
func (w *walker) take(n int) []int {
	if n <= 0 {
		return nil
	}
	w.src.ensure(w.pos + n)
	ids := w.src.ids
	if w.pos+n <= len(ids) {
		out := ids[w.pos : w.pos+n : w.pos+n]
		w.pos += n
		return out
	}
	// The corpus is exhausted (ensure encoded all of it).
	total := len(ids)
	if total == 0 {
		return nil
	}
	w.wraps++
	if n <= total {
		w.pos = n
		return ids[:n:n]
	}
	// A window longer than the whole corpus repeats it.
	out := make([]int, n)
	for i := range out {
		out[i] = ids[(w.pos+i)%total]
	}
	w.wraps += (w.pos + n) / total
	w.pos = (w.pos + n) % total
	return out
}
