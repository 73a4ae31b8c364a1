package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/jsonl"
)

// Run's pipeline uses every core and keeps the output in input order:
//
//	read (one goroutine): inputs → chunks of raw records (whole array
//	    elements or JSONL lines, split by source.go)
//	decode (workers): each chunk's records → record values
//	convert (Run's goroutine), chunk by chunk in input order: part
//	    merging, de-duplication, filters, sampling and the statistics —
//	    everything with state across records — into one batch of
//	    conversations per chunk
//	encode (workers): each batch's token counts and, for a JSONL writer,
//	    its JSON lines
//	write (one goroutine): the batches in order to the Writer
//
// Chunks and batches travel through bounded queues, so memory holds a few
// chunks per worker whatever the input size. Everything that decides what
// is written, and every warning, happens in the convert stage in input
// order, so the output, the warnings and the summary are those of a
// sequential run. Only after an error can the summary differ: Bytes counts
// what the reader had read, and after a write error Written may count
// conversations queued behind the one that failed.

// defaultChunkBytes is the raw record size at which a chunk is handed to
// the decoders (Options.chunkBytes overrides it in tests).
const defaultChunkBytes = 256 << 10

// tuning returns the number of decode and of encode goroutines and the
// chunk size.
func (o *Options) tuning() (workers, chunkBytes int) {
	workers, chunkBytes = o.workers, o.chunkBytes
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if chunkBytes <= 0 {
		chunkBytes = defaultChunkBytes
	}
	return workers, chunkBytes
}

// span locates one raw record in a chunk's data.
type span struct {
	start, end, line int
}

// chunk is a run of consecutive raw records of one input.
type chunk struct {
	name  string // input name for messages
	list  bool   // the input is a JSON array
	first bool   // first chunk of an input that was opened
	// last marks the input's final chunk; bytes is then the input's
	// decompressed size read.
	last  bool
	bytes int64
	data  []byte
	spans []span
	// broken, after the records, is a container error that ends the
	// input (the rest cannot be located); fatal ends the run.
	broken *jsonl.Error
	fatal  error

	decoded []decoded     // filled by a decoder
	done    chan struct{} // closed when decoded is filled
}

// decoded is a record as a decoder saw it, or why it could not be read.
type decoded struct {
	rec record
	err error
}

// JSONL returns a Writer of conversation JSONL to w, exactly as
// conv.NewWriter writes it; Run encodes its lines on every core.
func JSONL(w io.Writer) Writer {
	return &jsonlWriter{w: w, cw: conv.NewWriter(w)}
}

type jsonlWriter struct {
	w  io.Writer
	cw *conv.Writer
}

func (j *jsonlWriter) Write(c *conv.Conversation) error { return j.cw.Write(c) }

// run drives the pipeline; see the comment at the top of the file.
func (r *runner) run(ctx context.Context) error {
	n, size := r.opts.tuning()
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	ordered := make(chan *chunk, 2*n)
	work := make(chan *chunk, n)
	r.free = make(chan []byte, 3*n+2)
	var wg sync.WaitGroup
	wg.Go(func() { r.read(inner, size, ordered, work) })
	for range n {
		wg.Go(func() { r.decodeChunks(work) })
	}
	r.out = newOutput(r.w, r.opts.Tokenizer, n)
	err := r.convert(ctx, ordered)
	// What was written before an error is written, as a sequential run
	// writes each conversation at once.
	r.out.flush()
	cancel()
	wg.Wait()
	ts, werr := r.out.close()
	r.sum.UserTokens, r.sum.AssistantTokens, r.sum.ConversationTokens = ts.user, ts.assistant, ts.conversation
	if werr != nil {
		// Every conversation written precedes the point where convert
		// stopped, so the write error came first.
		return werr
	}
	return err
}

// read splits the inputs into chunks, in order, onto ordered (for the
// convert stage) and work (for the decoders). It stops at a fatal error
// or when ctx is done.
func (r *runner) read(ctx context.Context, size int, ordered, work chan<- *chunk) {
	defer close(work)
	defer close(ordered)
	send := func(c *chunk) bool {
		c.done = make(chan struct{})
		select {
		case ordered <- c:
		case <-ctx.Done():
			return false
		}
		if len(c.spans) == 0 {
			close(c.done)
			return true
		}
		select {
		case work <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, name := range r.opts.Inputs {
		if ctx.Err() != nil {
			return
		}
		rc, display, err := r.opts.Open(name)
		if err != nil {
			send(&chunk{name: name, fatal: err})
			return
		}
		ok := readInput(ctx, rc, display, size, r.free, send)
		rc.Close()
		if !ok {
			return
		}
	}
}

// readInput splits one opened input into chunks and hands them to send;
// it returns false when the run must stop.
// Chunk buffers come from free when the convert stage has returned some.
func readInput(ctx context.Context, rc io.Reader, name string, size int, free <-chan []byte, send func(*chunk) bool) bool {
	cr := &countingReader{r: rc}
	src := newSource(cr, name)
	c := &chunk{name: name, first: true}
	for {
		if ctx.Err() != nil {
			return false
		}
		data, line, err := src.next()
		c.list = src.isList
		if err != nil {
			c.last, c.bytes = true, cr.n
			var je *jsonl.Error
			switch {
			case errors.Is(err, io.EOF):
			case errors.As(err, &je):
				c.broken = je
			default:
				c.fatal = err
			}
			return send(c) && c.fatal == nil
		}
		start := len(c.data)
		c.data = append(c.data, data...)
		c.spans = append(c.spans, span{start, len(c.data), line})
		if len(c.data) >= size {
			if !send(c) {
				return false
			}
			c = &chunk{name: name}
			select {
			case c.data = <-free:
			default:
			}
		}
	}
}

// decodeChunks decodes the records of the chunks from work.
func (r *runner) decodeChunks(work <-chan *chunk) {
	var d decoder
	for c := range work {
		c.decoded = make([]decoded, len(c.spans))
		for i, s := range c.spans {
			d.format, d.list = r.opts.From, c.list
			dc := &c.decoded[i]
			dc.err = d.decode(c.data[s.start:s.end], &dc.rec)
		}
		close(c.done)
	}
}

// convert takes the decoded chunks in input order through part merging,
// de-duplication, the filters and sampling, queueing what is written.
func (r *runner) convert(ctx context.Context, ordered <-chan *chunk) error {
	m := &merger{mode: r.opts.Parts, emit: r.emit}
	var (
		redo   decoder // re-decodes a record in the input's format once known
		format Schema  // the current input's format, as the decoder's state
	)
	// finishInput counts the input's format, once its end or an error is
	// reached, as a sequential run counts it.
	finishInput := func() {
		if format != SchemaAuto {
			r.sum.Formats[format]++
		}
		format = SchemaAuto
	}
	for c := range ordered {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.first {
			r.sum.Inputs++
			format = r.opts.From
		}
		for i, s := range c.spans {
			if err := ctx.Err(); err != nil {
				finishInput()
				return err
			}
			d := c.decoded[i]
			// A decoder knows the input's format only when --input-format
			// forces it; once the first record sets it, a record read
			// differently under auto detection is read again.
			if r.opts.From == SchemaAuto && format != SchemaAuto &&
				(errors.Is(d.err, errNoFormatKey) || d.err == nil && d.rec.format != format) {
				redo.format, redo.list = format, c.list
				d.err = redo.decode(c.data[s.start:s.end], &d.rec)
			}
			if d.err != nil {
				if err := r.malformed(&jsonl.Error{File: c.name, Line: s.line, Err: d.err}); err != nil {
					finishInput()
					return err
				}
				continue
			}
			if d.rec.badText != nil {
				// mtrun rejects such a line; here it is repaired, counted
				// and warned about, or rejected with --strict.
				if r.opts.Strict {
					finishInput()
					return &jsonl.Error{File: c.name, Line: s.line, Err: d.rec.badText}
				}
				r.sum.Repaired++
				r.warnf("%s:%d: %v: replaced by U+FFFD (--strict rejects it, as mtrun does)", c.name, s.line, d.rec.badText)
			}
			format = d.rec.format
			d.rec.file, d.rec.line = c.name, s.line
			r.sum.Records++
			if err := m.add(d.rec); err != nil {
				finishInput()
				return err
			}
		}
		select {
		case r.free <- c.data[:0]:
		default:
		}
		c.decoded, c.data = nil, nil
		if c.last {
			r.sum.Bytes += c.bytes
			finishInput()
		}
		if c.broken != nil {
			// The container is broken: nothing after this point can be
			// located, so the rest of this input is skipped.
			if err := r.malformed(c.broken); err != nil {
				return err
			}
		}
		if c.fatal != nil {
			return c.fatal
		}
		if err := r.out.flush(); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.finish(m)
}

// output counts tokens and encodes the conversations the convert stage
// writes, batch by batch on the encode workers, and writes the batches in
// order on one goroutine.
type output struct {
	w       Writer
	jsonl   *jsonlWriter // nil: w gets the conversations one by one
	tok     Counter
	cur     *batch
	work    chan *batch
	ordered chan *batch
	wg      sync.WaitGroup // encoders
	written chan struct{}  // closed when the writer is done
	failed  chan struct{}  // closed at the first write error
	err     error          // the first write error; read after failed
	tokens  tokenCounts    // owned by the writer until written
}

// batch is the conversations written while converting one chunk.
type batch struct {
	convs  []*conv.Conversation
	buf    *bytes.Buffer // their JSON lines (JSONL writer)
	err    error         // encoding error after buf's lines
	tokens tokenStats
	done   chan struct{}
}

func newOutput(w Writer, tok Counter, n int) *output {
	o := &output{
		w:       w,
		tok:     tok,
		work:    make(chan *batch, n),
		ordered: make(chan *batch, 2*n),
		written: make(chan struct{}),
		failed:  make(chan struct{}),
	}
	o.jsonl, _ = w.(*jsonlWriter)
	if o.jsonl != nil || tok != nil {
		for range n {
			o.wg.Go(o.encode)
		}
	}
	go o.write()
	return o
}

// add queues c in the current batch.
func (o *output) add(c *conv.Conversation) {
	if o.cur == nil {
		o.cur = &batch{done: make(chan struct{})}
	}
	o.cur.convs = append(o.cur.convs, c)
}

// flush hands the current batch on; it returns the first write error.
func (o *output) flush() error {
	select {
	case <-o.failed:
		return o.err
	default:
	}
	b := o.cur
	if b == nil {
		return nil
	}
	o.cur = nil
	o.ordered <- b
	if o.jsonl == nil && o.tok == nil {
		close(b.done)
	} else {
		o.work <- b
	}
	return nil
}

// encode counts the tokens of batches and encodes their lines.
func (o *output) encode() {
	for b := range o.work {
		var enc *conv.Writer
		if o.jsonl != nil {
			b.buf = bufPool.Get().(*bytes.Buffer)
			enc = conv.NewWriter(b.buf)
		}
		for _, c := range b.convs {
			if o.tok != nil {
				countTokens(c, o.tok, &b.tokens)
			}
			if enc != nil {
				if err := enc.Write(c); err != nil {
					b.err = fmt.Errorf("write: %w", err)
					break
				}
			}
		}
		if enc != nil {
			b.convs = nil
		}
		close(b.done)
	}
}

// write writes the batches in order; after an error it only drains them.
func (o *output) write() {
	defer close(o.written)
	for b := range o.ordered {
		<-b.done
		if o.err != nil {
			continue
		}
		o.tokens.add(&b.tokens)
		err := o.writeBatch(b)
		if err != nil {
			o.err = err
			close(o.failed)
		}
	}
}

// bufPool recycles the batches' line buffers.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (o *output) writeBatch(b *batch) error {
	if o.jsonl != nil {
		_, err := o.jsonl.w.Write(b.buf.Bytes())
		b.buf.Reset()
		bufPool.Put(b.buf)
		b.buf = nil
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return b.err
	}
	for _, c := range b.convs {
		if err := o.w.Write(c); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// close waits until every batch handed on is written and returns the
// token counts and the first write error.
func (o *output) close() (tokenCounts, error) {
	close(o.work)
	close(o.ordered)
	o.wg.Wait()
	<-o.written
	return o.tokens, o.err
}
