package convert

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/jsonl"
)

// Counter counts tokens; tokenize.Tokenizer satisfies it.
type Counter interface {
	Name() string
	Count(text string) int
}

// Opener opens an input by name ("-" is stdin) and returns its
// decompressed stream and the name to use in messages.
type Opener func(name string) (io.ReadCloser, string, error)

// Options configure a conversion. The zero value of each field is the
// default, except Dedupe, which the tool turns on.
type Options struct {
	// Inputs are read in order as one stream ("-" is stdin).
	Inputs []string
	// Open opens an input; required.
	Open Opener
	// From forces the record schema; SchemaAuto detects it per input.
	From Schema
	// Parts says how ShareGPT "id_N" parts are merged (default adjacent).
	Parts PartsMode
	// Alternation repairs or drops conversations whose roles do not
	// alternate (default repair).
	Alternation Alternation
	// DropSystem removes system messages.
	DropSystem bool
	// KeepEmpty keeps empty and white-space-only messages.
	KeepEmpty bool
	// Dedupe drops a conversation whose id was already seen.
	Dedupe bool
	// ASCIIOnly drops conversations with any non-ASCII character.
	ASCIIOnly bool
	// MinTurns drops conversations with fewer non-system messages;
	// MaxTurns keeps only the first MaxTurns non-system messages. 0: off.
	MinTurns, MaxTurns int
	// MinContentLen and MaxContentLen drop conversations with a message
	// shorter or longer than that many characters (Unicode code points,
	// like Python's len). 0: off.
	MinContentLen, MaxContentLen int
	// MaxItems keeps a seeded uniform random sample of at most that many
	// conversations, written in input order. 0: all.
	MaxItems int
	// Seed seeds the sample.
	Seed uint64
	// Strict makes a malformed record an error instead of a skip.
	Strict bool
	// Tokenizer, if set, fills message token counts, assistant output
	// lengths and the token statistics.
	Tokenizer Counter
	// Log receives warnings about skipped records; nil discards them.
	Log io.Writer
	// MaxWarnings caps the warnings printed (0: 20); counts stay exact.
	MaxWarnings int

	// workers (0: GOMAXPROCS) and chunkBytes (0: defaultChunkBytes) tune
	// the pipeline; tests vary them.
	workers, chunkBytes int
}

// Validate checks the options for contradictions.
func (o *Options) Validate() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"min-turns", o.MinTurns}, {"max-turns", o.MaxTurns}, {"min-content-len", o.MinContentLen},
		{"max-content-len", o.MaxContentLen}, {"max-items", o.MaxItems}} {
		if v.n < 0 {
			return fmt.Errorf("--%s: %d is negative", v.name, v.n)
		}
	}
	if o.MinTurns > 0 && o.MaxTurns > 0 && o.MinTurns > o.MaxTurns {
		return fmt.Errorf("--min-turns %d is greater than --max-turns %d", o.MinTurns, o.MaxTurns)
	}
	if o.MinContentLen > 0 && o.MaxContentLen > 0 && o.MinContentLen > o.MaxContentLen {
		return fmt.Errorf("--min-content-len %d is greater than --max-content-len %d", o.MinContentLen, o.MaxContentLen)
	}
	if _, err := parseSchema(string(o.From)); err != nil {
		return err
	}
	if _, err := ParsePartsMode(string(o.Parts)); err != nil {
		return err
	}
	if _, err := ParseAlternation(string(o.Alternation)); err != nil {
		return err
	}
	if o.Open == nil {
		return errors.New("convert: Options.Open is nil")
	}
	return nil
}

// runner is the state of one Run.
type runner struct {
	opts     Options
	w        Writer
	sum      *Summary
	filter   filter
	ids      map[string]struct{}
	partEnds map[string]partEnd // --parts adjacent: base id → end of its last conversation
	sample   *sampler
	warnings int
	out      *output
	free     chan []byte // chunk buffers the convert stage is done with
}

// Writer receives the converted conversations; *conv.Writer is one.
type Writer interface {
	Write(c *conv.Conversation) error
}

// Run converts opts.Inputs to conversations written to w and returns what
// it did. A malformed record is skipped with a warning (or, with Strict,
// returned as a *jsonl.Error "file:line: field: problem"). Read and write
// errors and ctx's cancellation end the run; the summary so far is
// returned with the error. Run does not flush w.
//
// Records are decoded, token-counted and (for a JSONL Writer) encoded on
// all cores; the output, the warnings and the summary are the same as if
// everything ran in input order on one (see pipeline.go).
func Run(ctx context.Context, opts Options, w Writer) (*Summary, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.Parts, _ = ParsePartsMode(string(opts.Parts))
	opts.Alternation, _ = ParseAlternation(string(opts.Alternation))
	if opts.MaxWarnings == 0 {
		opts.MaxWarnings = 20
	}
	r := &runner{opts: opts, w: w, sum: newSummary()}
	r.filter.opts = &r.opts
	if opts.Dedupe {
		r.ids = map[string]struct{}{}
	}
	if opts.MaxItems > 0 {
		r.sample = newSampler(opts.MaxItems, opts.Seed)
	}
	if opts.Tokenizer != nil {
		r.sum.Tokenizer = opts.Tokenizer.Name()
	}
	return r.sum, r.run(ctx)
}

// finish flushes the pending part groups and writes the sample.
func (r *runner) finish(m *merger) error {
	if err := m.flush(); err != nil {
		return err
	}
	if r.sample != nil {
		for _, it := range r.sample.items() {
			r.write(it)
		}
	}
	return nil
}

// malformed counts a bad record, or returns it as the error with Strict.
func (r *runner) malformed(err *jsonl.Error) error {
	if r.opts.Strict {
		return err
	}
	r.sum.Malformed++
	r.warnf("skipped %v", err)
	return nil
}

func (r *runner) warnf(format string, args ...any) {
	if r.opts.Log == nil {
		return
	}
	r.warnings++
	switch {
	case r.warnings <= r.opts.MaxWarnings:
		fmt.Fprintf(r.opts.Log, "warning: "+format+"\n", args...)
	case r.warnings == r.opts.MaxWarnings+1:
		fmt.Fprintf(r.opts.Log, "warning: more than %d warnings; the rest are only counted in the summary\n", r.opts.MaxWarnings)
	}
}

func (r *runner) drop(reason Reason) { r.sum.Dropped[reason]++ }

// emit splits a group into conversations and takes each through
// de-duplication, the filters and sampling.
func (r *runner) emit(g *group) error {
	st, err := g.merge(func(it item, i int) error {
		if r.opts.Parts == PartsAdjacent && it.first >= 0 {
			// A late run of parts that would continue a conversation
			// already written cannot be joined to it any more.
			prev, ok := r.partEnds[it.base]
			if i == 0 && ok && (it.first == prev.end || it.first == prev.end-1 && it.head == prev.tail) {
				r.sum.Conversations++
				r.warnf("%s:%d: part %q continues an earlier part of %q that is not adjacent to it; dropped (use --parts all to merge them)", it.file, it.line, it.c.ID, it.base)
				r.drop(ReasonPartNotAdjacent)
				return nil
			}
			if r.partEnds == nil {
				r.partEnds = map[string]partEnd{}
			}
			r.partEnds[it.base] = partEnd{end: it.end, tail: it.tail}
		}
		return r.emitItem(it)
	})
	r.sum.DuplicateParts += st.dupParts
	r.sum.PartsJoined += st.joined
	r.sum.PartOverlaps += st.overlaps
	r.sum.PartsSeparate += st.separate
	return err
}

// partEnd is where the last conversation written of a base id ended: the
// part number a continuation would have, and a hash of its last source
// message.
type partEnd struct {
	end  int
	tail uint64
}

// emitItem takes one conversation through de-duplication, the filters and
// sampling.
func (r *runner) emitItem(it item) error {
	r.sum.Conversations++
	if r.ids != nil {
		if _, ok := r.ids[it.c.ID]; ok {
			r.drop(ReasonDuplicateID)
			return nil
		}
		r.ids[it.c.ID] = struct{}{}
	}
	r.sum.Removed.Tool += it.dropped
	if reason := r.filter.apply(&it.c, &r.sum.Removed); reason != "" {
		r.drop(reason)
		return nil
	}
	if r.sample != nil {
		if r.sample.add(it) {
			r.drop(ReasonNotSampled)
		}
		return nil
	}
	r.write(it)
	return nil
}

// write records the statistics of one conversation that need no token
// counts and queues it for token counting and writing (see output).
func (r *runner) write(it item) {
	c := &it.c
	s := r.sum
	turns := 0
	for i := range c.Messages {
		switch c.Messages[i].Role {
		case conv.RoleSystem:
			s.System++
		case conv.RoleUser:
			s.User++
			turns++
		case conv.RoleTool:
			s.Tool++
		case conv.RoleAssistant:
			s.Assistant++
			turns++
		}
	}
	if last := c.Messages[len(c.Messages)-1]; last.Role == conv.RoleUser {
		s.EndsWithUser++
	}
	s.Turns.Add(turns)
	s.Written++
	r.out.add(c)
}

// tokenStats are the token counts of written conversations, in order.
type tokenStats struct {
	user, assistant, conversation []int
}

// tokenizerMemoryLimit is the soft memory limit of a streaming run that
// counts tokens (see MemoryLimit).
const tokenizerMemoryLimit = 48 << 20

// MemoryLimit returns the soft limit, in bytes, that a tool should give the
// Go runtime's heap for a run with these options (runtime/debug's
// SetMemoryLimit), or 0 for none. A streaming run with a tokenizer holds
// about 25 MB (the tokenizer, its piece cache and the pipeline's chunks),
// and the collector's default of twice the live heap then takes the
// process to about 66 MB; 48 MiB keeps it near 52 MB for a third more
// collections. A run that holds conversations (--max-items, --parts all)
// gets none: its heap grows with the input, and a limit below it would
// only make the collector run without end.
func (o *Options) MemoryLimit() int64 {
	if o.Tokenizer == nil || o.MaxItems > 0 || o.Parts == PartsAll {
		return 0
	}
	return tokenizerMemoryLimit
}

// tokenCounts are the distributions of token counts of written
// conversations.
type tokenCounts struct {
	user, assistant, conversation Counts
}

// add counts the values of ts.
func (c *tokenCounts) add(ts *tokenStats) {
	for _, n := range ts.user {
		c.user.Add(n)
	}
	for _, n := range ts.assistant {
		c.assistant.Add(n)
	}
	for _, n := range ts.conversation {
		c.conversation.Add(n)
	}
}

// countTokens fills c's message token counts and assistant output
// lengths and appends them to ts.
func countTokens(c *conv.Conversation, tok Counter, ts *tokenStats) {
	c.Meta["tokenizer"] = tok.Name()
	total := 0
	for i := range c.Messages {
		m := &c.Messages[i]
		n := tok.Count(m.Content)
		for _, c := range m.ToolCalls {
			// A tool call's output is its name and arguments.
			n += tok.Count(c.Function.Name) + tok.Count(c.Function.Arguments)
		}
		m.Tokens = n
		total += n
		switch m.Role {
		case conv.RoleUser:
			ts.user = append(ts.user, n)
		case conv.RoleAssistant:
			m.OutputTokens = n
			ts.assistant = append(ts.assistant, n)
		}
	}
	ts.conversation = append(ts.conversation, total)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
