// Package source yields sessions (conversations) from every input mtrun
// replays: conversation JSONL, vLLM's JSON list and generate_conversations
// config, datasets read through mtconvert, and production traces. Each
// format is one file that registers itself (see Register); mtrun and
// mtconvert find formats by name or detect them from the input's head.
package source

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/convert"
)

// Source yields sessions in order. A Source is used by one goroutine.
type Source interface {
	// Next returns the next session; ok is false at the end of the input
	// or on the first error (see Err).
	Next() (c conv.Conversation, ok bool)
	// Err returns the error that ended the input, nil at a clean end.
	// Errors about the input name the file, line and field
	// ("file:line: field: problem").
	Err() error
	// Close releases the input.
	Close() error
}

// Format reads one input format.
type Format struct {
	// Name is the format's --input-format value, e.g. "mooncake".
	Name string
	// Doc is a one-line description for --help and docs.
	Doc string
	// Timed marks formats whose sessions carry trace timestamps
	// (conv.Message.TimestampMs): mtrun replays them on the trace clock
	// unless another schedule is asked for.
	Timed bool
	// Detect reports whether an input named name, whose first bytes are
	// head (up to DetectBytes), is in this format; nil: only by name.
	Detect func(name string, head []byte) bool
	// Open returns a Source over r; name is used in errors.
	Open func(r io.Reader, name string, o Options) (Source, error)
	// Schema is the record schema internal/convert reads this format's
	// records with: mtconvert converts such inputs itself (its --parts,
	// --alternation and the other conversion flags apply). SchemaAuto
	// for formats only Open reads.
	Schema convert.Schema
}

// DetectBytes is how much of an input Detect sees.
const DetectBytes = 64 << 10

// Options configure the formats that synthesize or transform text.
type Options struct {
	// Tokenizer is the tokenizer spec synthesized text is exact in
	// (tokenize.Load); "" is the default tokenizer.
	Tokenizer string
	// Seed seeds synthesized text and sampling.
	Seed uint64
	// SeedSet says Seed was given; formats with a seed of their own (a
	// generate_conversations config) keep theirs otherwise.
	SeedSet bool
	// Log receives warnings about the input (records a converter skipped,
	// conversations it dropped) and statistics a format prints; nil
	// discards them.
	Log io.Writer
}

var (
	mu      sync.Mutex
	formats = map[string]Format{}
)

// Register adds a format; it panics on a duplicate name (a programming
// error, caught by every test run).
func Register(f Format) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := formats[f.Name]; dup {
		panic(fmt.Sprintf("source: format %q registered twice", f.Name))
	}
	formats[f.Name] = f
}

// Lookup returns the format named name.
func Lookup(name string) (Format, bool) {
	mu.Lock()
	defer mu.Unlock()
	f, ok := formats[name]
	return f, ok
}

// Formats returns every registered format, sorted by name.
func Formats() []Format {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Format, 0, len(formats))
	for _, f := range formats {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Len returns the number of sessions of s when s knows it (a Source
// with a Len method, such as Slice), else 0.
func Len(s Source) int {
	if l, ok := s.(interface{ Len() int }); ok {
		return l.Len()
	}
	return 0
}

// Slice is a Source over conversations in memory.
func Slice(convs []conv.Conversation) Source { return &slice{convs: convs} }

type slice struct {
	convs []conv.Conversation
	i     int
}

func (s *slice) Next() (conv.Conversation, bool) {
	if s.i >= len(s.convs) {
		return conv.Conversation{}, false
	}
	s.i++
	return s.convs[s.i-1], true
}

func (s *slice) Len() int     { return len(s.convs) }
func (s *slice) Err() error   { return nil }
func (s *slice) Close() error { return nil }
