// Package tokenize counts and produces token ids for the mtkit tools: a
// model's own tokenizer.json (byte-level BPE, exact ids) or a built-in
// tiktoken encoding (o200k_base, the default, and cl100k_base).
//
// Load turns a spec (an encoding name, an alias such as "gpt-4o", a path to a
// tokenizer.json file or to a model directory holding one) into a Tokenizer.
// Loaded tokenizers are cached for the life of the process.
package tokenize

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Default is the encoding used when no tokenizer is named.
const Default = "o200k_base"

// Tokenizer turns text into token ids and back. Implementations are safe
// for concurrent use.
type Tokenizer interface {
	// Name identifies the tokenizer: a built-in encoding name or the path
	// of the tokenizer.json it was loaded from.
	Name() string
	// Encode returns the token ids of text. Special tokens written in the
	// text are encoded as the special tokens they name.
	Encode(text string) []int
	// Decode returns the text of ids.
	Decode(ids []int) string
	// Count returns len(Encode(text)), possibly faster.
	Count(text string) int
}

// ErrNotFound is wrapped by the error Load returns when a spec names neither
// a built-in encoding nor an existing file or directory.
var ErrNotFound = errors.New("no such built-in encoding or file")

// builtinAliases maps every accepted built-in spec to its encoding name.
var builtinAliases = map[string]string{
	"o200k_base":  "o200k_base",
	"o200k":       "o200k_base",
	"gpt-4o":      "o200k_base",
	"cl100k_base": "cl100k_base",
	"cl100k":      "cl100k_base",
	"gpt-4":       "cl100k_base",
}

// Builtins returns the accepted built-in specs (encoding names and aliases)
// in a stable order.
func Builtins() []string {
	return []string{"o200k_base", "o200k", "gpt-4o", "cl100k_base", "cl100k", "gpt-4"}
}

// loadEntry is one cached Load result; once guards the single load.
type loadEntry struct {
	once sync.Once
	tok  Tokenizer
	err  error
}

// cache holds one *loadEntry per canonical spec.
var cache sync.Map

// Load returns the tokenizer named by spec:
//   - "" means Default;
//   - "o200k_base", "cl100k_base" and the aliases "o200k", "gpt-4o",
//     "cl100k", "gpt-4" are built-in tiktoken encodings;
//   - anything else is a path to a Hugging Face tokenizer.json file or to a
//     directory containing one.
//
// Results (including errors) are cached per spec for the life of the
// process, so calling Load again with the same spec is cheap and returns the
// same Tokenizer. Load is safe for concurrent use.
func Load(spec string) (Tokenizer, error) {
	key := canonicalSpec(spec)
	v, _ := cache.LoadOrStore(key, &loadEntry{})
	e := v.(*loadEntry)
	e.once.Do(func() { e.tok, e.err = load(spec, key) })
	return e.tok, e.err
}

// canonicalSpec maps spec to the cache key: the encoding name of a
// built-in, otherwise the cleaned absolute path.
func canonicalSpec(spec string) string {
	if spec == "" {
		return Default
	}
	if name, ok := builtinAliases[strings.ToLower(spec)]; ok {
		return name
	}
	if abs, err := filepath.Abs(spec); err == nil {
		return "file:" + abs
	}
	return "file:" + spec
}

// load does the uncached work of Load.
func load(spec, key string) (Tokenizer, error) {
	if !strings.HasPrefix(key, "file:") {
		return newBuiltin(key)
	}
	path, err := resolvePath(spec)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w", spec, err)
	}
	defer f.Close()
	// Streamed: the file is never held whole in memory. An error's line
	// and column are found by reading the file again.
	return parseHF(f, path, func(off int64) string {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return path
		}
		return lineCol(path, f, off)
	})
}

// resolvePath finds the tokenizer.json named by spec: the file itself, or
// tokenizer.json inside the directory spec.
func resolvePath(spec string) (string, error) {
	fi, err := os.Stat(spec)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("tokenizer %q: %w (built-ins: %s)", spec, ErrNotFound, strings.Join(Builtins(), ", "))
		}
		return "", fmt.Errorf("tokenizer %q: %w", spec, err)
	}
	if !fi.IsDir() {
		return spec, nil
	}
	p := filepath.Join(spec, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("tokenizer %q: directory has no tokenizer.json: %w", spec, ErrNotFound)
	}
	return p, nil
}
