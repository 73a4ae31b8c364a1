package replay

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
)

// DefaultBuffer is the default capacity of the queue between the replay
// and its output writer (Sink.Buffer), in items: one item is the records
// of one attempt or one conversation.
const DefaultBuffer = 4096

// flushTick is how often the writer flushes outputs that got data (besides
// when its queue runs empty). Outputs that end frames or parts at most
// every second (iox.FrameInterval, record.PartInterval) thus do so within
// 1.5 s of a record's arrival.
const flushTick = 500 * time.Millisecond

// flushGap is the least time between two flushes on an emptied queue: at
// thousands of requests a second the queue runs empty after nearly every
// record, and a flush each time would cost a write system call per
// record. A record waits at most flushGap for its flush.
const flushGap = 5 * time.Millisecond

// item is one unit of output: the records of one attempt, or a
// conversation.
type item struct {
	recs []*record.Record
	conv *conv.Conversation
}

// writer encodes and writes the sink's outputs on its own goroutine, so
// that a slow disk or pipe never holds up a session that is timing a
// request. Its queue is bounded: a sender that finds it full waits, and
// the time it waits is counted (Summary.WriteBlocked). Each output fails
// on its own: after a write error on one, the writer goes on writing the
// other, and reports the error once through failed.
type writer struct {
	sink    Sink
	q       chan item
	done    chan struct{}
	blocked atomic.Int64 // ns senders waited for room in q
	// failed is called (on the writer goroutine) with the first error of
	// each output; records tells which.
	failed        func(records bool, err error)
	recErr, cvErr error
}

func newWriter(sink Sink, failed func(records bool, err error)) *writer {
	n := sink.Buffer
	if n <= 0 {
		n = DefaultBuffer
	}
	w := &writer{sink: sink, q: make(chan item, n), done: make(chan struct{}), failed: failed}
	go w.run()
	return w
}

// send queues it, waiting (and counting the wait) while the queue is full.
// Calls must be serialized by the caller, which fixes the output order.
func (w *writer) send(it item) {
	select {
	case w.q <- it:
		return
	default:
	}
	start := time.Now()
	if w.sink.onBlocked != nil {
		w.sink.onBlocked()
	}
	w.q <- it
	w.blocked.Add(int64(time.Since(start)))
}

// close writes what is queued, flushes and stops the writer. The outputs
// themselves are closed by their owner.
func (w *writer) close() {
	close(w.q)
	<-w.done
}

func (w *writer) run() {
	defer close(w.done)
	tick := time.NewTicker(flushTick)
	defer tick.Stop()
	// soon flushes what came within flushGap of the last flush.
	soon := time.NewTimer(time.Hour)
	soon.Stop()
	defer soon.Stop()
	var last time.Time // of the last flush on an emptied queue
	armed := false
	for {
		select {
		case it, ok := <-w.q:
			if !ok {
				w.flush()
				return
			}
			w.write(it)
			if len(w.q) > 0 || armed {
				continue
			}
			if since := time.Since(last); since < flushGap {
				soon.Reset(flushGap - since)
				armed = true
				continue
			}
			w.flush()
			last = time.Now()
		case <-soon.C:
			armed = false
			w.flush()
			last = time.Now()
		case <-tick.C:
			w.flush()
		}
	}
}

func (w *writer) write(it item) {
	if w.recErr == nil {
		for _, rec := range it.recs {
			if err := w.sink.Records.Encode(rec); err != nil {
				w.recordsFailed(err)
				break
			}
		}
	}
	if it.conv != nil && w.cvErr == nil {
		if err := w.sink.Conversations.Write(it.conv); err != nil {
			w.convsFailed(err)
		}
	}
}

// flush asks the outputs to make what they hold readable (they may wait
// for a later call: see flushTick); with nothing new it costs nothing.
func (w *writer) flush() {
	if w.recErr == nil {
		if err := w.sink.Records.Flush(); err != nil {
			w.recordsFailed(err)
		}
	}
	if w.cvErr == nil && w.sink.Conversations != nil {
		if err := w.sink.Conversations.Flush(); err != nil {
			w.convsFailed(err)
		}
	}
}

func (w *writer) recordsFailed(err error) {
	w.recErr = fmt.Errorf("writing records: %w", err)
	w.failed(true, w.recErr)
}

func (w *writer) convsFailed(err error) {
	w.cvErr = fmt.Errorf("writing conversations: %w", err)
	w.failed(false, w.cvErr)
}
