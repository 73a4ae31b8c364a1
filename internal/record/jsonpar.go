package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Parallel decoding of JSONL files. A reader goroutine cuts the input into
// chunks of whole lines, workers decode the chunks into batches, and Scan
// hands the batches out strictly in input order. The result is the same as
// JSONDecoder's, line numbers and errors included; only files use it, since
// a chunk waits for its last line and a live pipe must deliver each record
// as soon as its line arrives.

const (
	// parChunkSize is the size of the chunks cut from the input; a line
	// longer than that makes its chunk grow to hold it.
	parChunkSize = 1 << 20
	// parAhead is the number of chunks read ahead of Scan, which bounds
	// the memory in flight to about (parAhead+2) chunks and their records.
	parAhead = 4
	// maxParWorkers caps the decoding goroutines.
	maxParWorkers = 4
)

// parItem is one non-blank line of a chunk: its record, or its problem.
type parItem struct {
	rec  Record
	err  error // the problem, not yet located (see parallelJSONDecoder.Scan)
	line int   // 1-based line number within the chunk
}

// parBatch is a decoded chunk.
type parBatch struct {
	items []parItem
	lines int // lines the chunk ends (its newlines, plus an unterminated last line)
}

// parJob is a chunk to decode; the batch goes to res.
type parJob struct {
	data []byte
	last bool // data reaches the end of the input
	res  chan *parBatch
}

// parallelJSONDecoder decodes JSONL from a file on several goroutines; it
// implements Decoder like JSONDecoder, with the same results.
type parallelJSONDecoder struct {
	cols  *Columns // the fields decoded; nil: all
	name  string
	chunk int

	order chan chan *parBatch // one result per chunk, in input order
	jobs  chan parJob
	quit  chan struct{}
	bufs  chan []byte    // chunk buffers for reuse
	items chan []parItem // batch slices for reuse
	wg    sync.WaitGroup
	rerr  error // the read error; written before order is closed

	// inline, with a single CPU, reads and decodes in Scan instead.
	inline *chunker

	cur    *parBatch
	pos    int
	base   int // lines before cur
	err    error
	fatal  bool
	closed bool
}

// newParallelJSONDecoder starts decoding r (already decompressed) on
// GOMAXPROCS workers, at most maxParWorkers; name is used in errors. chunk
// is the chunk size (0 for the default). Close stops the goroutines; it
// must be called before r is closed.
func newParallelJSONDecoder(r io.Reader, name string, chunk int, cols *Columns) *parallelJSONDecoder {
	return newChunkedJSONDecoder(r, name, chunk, min(runtime.GOMAXPROCS(0), maxParWorkers), cols)
}

// newChunkedJSONDecoder is newParallelJSONDecoder with a number of
// workers; with fewer than 2 it starts no goroutine and decodes each chunk
// in Scan, deterministically.
func newChunkedJSONDecoder(r io.Reader, name string, chunk, workers int, cols *Columns) *parallelJSONDecoder {
	if chunk <= 0 {
		chunk = parChunkSize
	}
	d := &parallelJSONDecoder{
		cols:  cols,
		name:  name,
		chunk: chunk,
		order: make(chan chan *parBatch, parAhead),
		jobs:  make(chan parJob, parAhead),
		quit:  make(chan struct{}),
		bufs:  make(chan []byte, parAhead+2),
		items: make(chan []parItem, parAhead+2),
	}
	if workers < 2 {
		d.inline = &chunker{r: r, size: chunk, buffer: d.buffer}
		return d
	}
	d.wg.Add(1 + workers)
	go d.read(r)
	for range workers {
		go d.work()
	}
	return d
}

// read queues the chunks of r for the workers.
func (d *parallelJSONDecoder) read(r io.Reader) {
	defer d.wg.Done()
	defer close(d.jobs)
	defer close(d.order)
	c := chunker{r: r, size: d.chunk, buffer: d.buffer}
	for {
		data, last, ok := c.next()
		if !ok {
			d.rerr = c.err
			return
		}
		res := make(chan *parBatch, 1)
		select {
		case d.order <- res:
		case <-d.quit:
			return
		}
		select {
		case d.jobs <- parJob{data: data, last: last, res: res}:
		case <-d.quit:
			return
		}
	}
}

// chunker cuts an input into chunks that end after a newline. A chunk is
// returned only once the next read shows whether more data follows, so
// the chunk that reaches the end of the input is marked last.
type chunker struct {
	r      io.Reader
	size   int              // the chunk size
	buffer func(int) []byte // an empty buffer with room for n bytes
	err    error            // the read error, once next returned false

	pending []byte // complete lines waiting for the next read
	carry   []byte // the start of a line that continues
	out     []chunk
	done    bool
}

type chunk struct {
	data []byte
	last bool
}

// next returns the next non-empty chunk; last says it reaches the end of
// the input. It returns false when the input is exhausted or a read failed
// (then err is set).
func (c *chunker) next() (data []byte, last bool, ok bool) {
	for len(c.out) == 0 {
		if c.done {
			return nil, false, false
		}
		c.step()
	}
	ch := c.out[0]
	c.out = c.out[1:]
	return ch.data, ch.last, true
}

// emit queues a chunk unless it is empty.
func (c *chunker) emit(data []byte, last bool) {
	if len(data) > 0 {
		c.out = append(c.out, chunk{data, last})
	}
}

// step reads one buffer's worth and queues the chunks it completes.
func (c *chunker) step() {
	size := c.size
	if len(c.carry) > 0 {
		size = max(size, 2*len(c.carry))
	}
	buf := append(c.buffer(size), c.carry...)
	n, err := readFull(c.r, buf[len(buf):cap(buf)])
	buf = buf[:len(buf)+n]
	switch {
	case errors.Is(err, io.EOF):
		// The input ends: in pending when nothing follows it.
		c.done = true
		if len(buf) == 0 {
			c.emit(c.pending, true)
			return
		}
		c.emit(c.pending, false)
		c.emit(buf, true)
		return
	case err != nil:
		// Like JSONDecoder, deliver the complete lines read so far, then
		// the error; an unterminated line is lost.
		c.done, c.err = true, err
		c.emit(c.pending, false)
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			c.emit(buf[:i+1], false)
		}
		return
	}
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 {
		// A line longer than the buffer: read on into a bigger one.
		c.carry = buf
		return
	}
	c.emit(c.pending, false)
	// carry shares buf's array beyond pending; it is copied into the next
	// buffer before pending is decoded and its buffer reused.
	c.pending, c.carry = buf[:i+1], buf[i+1:]
}

// readFull reads into p until it is full, the input ends (io.EOF, possibly
// with data) or a read fails.
func readFull(r io.Reader, p []byte) (int, error) {
	n := 0
	zero := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m > 0 {
			zero = 0
		} else if zero++; zero >= 100 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// buffer returns an empty chunk buffer with room for at least size bytes.
func (d *parallelJSONDecoder) buffer(size int) []byte {
	select {
	case b := <-d.bufs:
		if cap(b) >= size {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, size)
}

// work decodes chunks until the reader is done or Close is called.
func (d *parallelJSONDecoder) work() {
	defer d.wg.Done()
	for {
		var j parJob
		var ok bool
		select {
		case j, ok = <-d.jobs:
			if !ok {
				return
			}
		case <-d.quit:
			return
		}
		j.res <- d.decode(j.data, j.last) // buffered: never blocks
	}
}

// decodeChunk decodes the lines of data the way JSONDecoder.Scan does;
// last says data ends the input, where a cut-short line is ErrTruncated.
func decodeChunk(data []byte, last bool, items []parItem, cols *Columns) *parBatch {
	b := &parBatch{}
	for off := 0; off < len(data); {
		end := len(data)
		next := end
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			end = off + i
			next = end + 1
		}
		raw := data[off:end]
		off = next
		b.lines++
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		items = append(items, parItem{line: b.lines})
		it := &items[len(items)-1]
		if err := unmarshalRecord(line, &it.rec, cols); err != nil {
			it.err = lineProblem(err, last && next == len(data))
		} else if err := it.rec.validate(); err != nil {
			it.err = err
		}
	}
	b.items = items
	return b
}

// Scan advances to the next line, like JSONDecoder.Scan.
func (d *parallelJSONDecoder) Scan() bool {
	if d.fatal {
		return false
	}
	d.err = nil
	for d.cur == nil || d.pos >= len(d.cur.items) {
		if d.cur != nil {
			d.base += d.cur.lines
			d.recycle(d.cur)
			d.cur = nil
		}
		b, ok := d.nextBatch()
		if !ok {
			if d.rerr != nil {
				d.err = fmt.Errorf("%s: %w", d.name, d.rerr)
			}
			d.fatal = true
			return false
		}
		d.cur, d.pos = b, 0
	}
	it := &d.cur.items[d.pos]
	d.pos++
	if it.err != nil {
		d.err = &SyntaxError{File: d.name, Line: d.base + it.line, Err: it.err}
	}
	return true
}

// nextBatch returns the next decoded chunk, or false at the end of the
// input or after a read error (then rerr is set).
func (d *parallelJSONDecoder) nextBatch() (*parBatch, bool) {
	if d.inline == nil {
		res, ok := <-d.order
		if !ok {
			return nil, false
		}
		return <-res, true
	}
	data, last, ok := d.inline.next()
	if !ok {
		d.rerr = d.inline.err
		return nil, false
	}
	return d.decode(data, last), true
}

// decode decodes a chunk into a batch and keeps the chunk's buffer for
// reuse: the records copy what they keep.
func (d *parallelJSONDecoder) decode(data []byte, last bool) *parBatch {
	var items []parItem
	select {
	case items = <-d.items:
	default:
	}
	b := decodeChunk(data, last, items[:0], d.cols)
	if cap(data) <= 2*d.chunk {
		select {
		case d.bufs <- data[:0]:
		default:
		}
	}
	return b
}

// recycle hands a consumed batch's slice back to the workers.
func (d *parallelJSONDecoder) recycle(b *parBatch) {
	clear(b.items) // drop references to the records' strings and lists
	select {
	case d.items <- b.items[:0]:
	default:
	}
}

// Record returns the record of the last successful Scan.
func (d *parallelJSONDecoder) Record() *Record {
	if d.cur == nil || d.pos == 0 {
		return &Record{}
	}
	return &d.cur.items[d.pos-1].rec
}

// Err returns the problem with the last line, or a read error.
func (d *parallelJSONDecoder) Err() error { return d.err }

// Close stops the goroutines and waits for them, so the input can be
// closed. It is idempotent.
func (d *parallelJSONDecoder) Close() {
	if d.closed {
		return
	}
	d.closed = true
	close(d.quit)
	d.wg.Wait()
}
