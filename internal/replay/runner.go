package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/segment"
	"github.com/mtkit/mtkit/internal/source"
)

// Sink receives what a replay produces.
type Sink struct {
	// Records receives one record per request attempt and choice.
	Records record.Encoder
	// Conversations, when set, receives every started conversation with
	// the model's real answers once it ends (finished or not).
	Conversations *conv.Writer
	// Log receives --print-content output and warnings; nil discards.
	Log io.Writer
	// Progress, when set, receives a status line every second.
	Progress io.Writer
	// Buffer is the capacity of the queue to the output writer, in
	// attempts and conversations (0: DefaultBuffer). Records and
	// conversations are written on a goroutine of their own; a session
	// waits only when the queue is full (Summary.WriteBlocked). Records
	// and Conversations are flushed when the queue runs empty (at most
	// every 5 ms) and every 500 ms.
	Buffer int

	onBlocked func() // tests: called when a send finds the queue full
}

// Summary counts what a replay did.
type Summary struct {
	RunID       string
	Model       string
	MaxModelLen int
	Requests    int64 // turns sent (retries not counted)
	Attempts    int64
	Failed      int64 // turns that failed after all retries
	Retries     int64
	// Conversations by final status.
	Started, Finished, FailedConversations, Abandoned, Unfinished int64
	Elapsed                                                       time.Duration
	// WriteBlocked is the time sessions waited for room in the queue to
	// the output writer (outputs slower than the replay); 0 normally.
	WriteBlocked time.Duration
	// NextSeq is the seq after the last record written.
	NextSeq int64
	// Verified counts the answers compared with the dataset's
	// (--verify-output), Mismatched those that differed; FirstMismatch
	// is the first of these in record order.
	Verified, Mismatched int64
	FirstMismatch        *TurnRef
}

// TurnRef names one turn of one conversation.
type TurnRef struct {
	Conversation string `json:"conversation_id"`
	Turn         int    `json:"turn"`
}

// NewRunID returns a random run id.
func NewRunID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// Run replays convs until they are all done or a stop condition holds.
// Cancelling stop starts no new turns and lets in-flight ones finish;
// cancelling abort cancels in-flight requests too (they are recorded with
// error class "canceled"). Run returns after every started conversation
// has been written to the sinks.
//
// The first write error stops the run and is the error returned: no new
// turns start, and a records error also cancels the requests in flight
// (their records could not be written). The other output goes on
// receiving everything, so a healthy disk loses nothing.
//
// Sessions are taken from in as they start; Run does not close in, and an
// error of in ends the run like a write error.
func Run(stop, abort context.Context, opts Options, in source.Source, sink Sink) (*Summary, error) {
	o := opts.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	if sink.Log == nil {
		sink.Log = io.Discard
	}
	// Every output of the run passes the redactor (see Redactor).
	red := NewRedactor(&o)
	sink.Records, sink.Log, sink.Progress = red.Encoder(sink.Records), red.Writer(sink.Log), red.Writer(sink.Progress)
	sched := o.Shape()
	lanes := o.lanes(sched)
	concurrency := len(lanes)
	if sched.Users() == 0 {
		concurrency = max(o.MaxInFlight, 64)
	}
	abort, cancelAbort := context.WithCancel(abort)
	defer cancelAbort()
	r := &runner{o: o, sched: sched, c: newClient(&o, concurrency), sink: sink, abort: abort, cancelAbort: cancelAbort, red: red}
	defer r.c.close()
	if err := r.discover(stop); err != nil {
		return nil, red.Error(err)
	}
	var cancelStop context.CancelFunc
	r.stop, cancelStop = context.WithCancel(stop)
	defer cancelStop()
	r.cancelStop = cancelStop
	r.src = &sessions{in: in, loop: o.Loop, total: source.Len(in)}
	r.rng = mrand.New(mrand.NewPCG(o.RandSeed, 0x6d746b6974))
	var (
		arr   schedule.Arrivals
		ahead *window
		more  bool
	)
	if sched.Users() == 0 {
		arr, ahead = sched.Arrivals(), r.newWindow()
		more = r.prefill(ahead, arr) // before the clock starts
	}
	r.anchor = time.Now()
	if !o.Start.IsZero() {
		r.anchor = o.Start
	}
	r.seq = o.FirstSeq
	r.w = newWriter(sink, r.writeFailed)
	if o.Duration > 0 {
		// From the schedule's start, so that processes sharing a Start
		// (split runs, staged ones) end together.
		t := time.AfterFunc(time.Until(r.anchor.Add(o.Duration)), cancelStop)
		defer t.Stop()
	}
	if sink.Progress != nil {
		done, exited := make(chan struct{}), make(chan struct{})
		defer func() { close(done); <-exited }() // the last line ends before Run returns
		go func() { defer close(exited); r.progress(done) }()
	}
	if sched.Users() > 0 {
		r.lanes(lanes)
	} else {
		r.arrivals(arr, ahead, more)
	}
	r.sum.Elapsed = time.Since(r.anchor)
	if t := r.hungTimer.Load(); t != nil {
		t.Stop()
	}
	r.w.close()
	r.sum.RunID, r.sum.Model, r.sum.MaxModelLen = o.RunID, r.model, r.maxLen
	r.sum.WriteBlocked = time.Duration(r.w.blocked.Load())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.NextSeq = r.seq
	r.sum.Model = red.String(r.sum.Model)
	err := r.err
	if err == nil {
		err = r.unreachableErr
	}
	return &r.sum, red.Error(err)
}

type runner struct {
	o           Options
	sched       schedule.Schedule
	c           *client
	sink        Sink
	stop        context.Context // no new turns
	cancelStop  context.CancelFunc
	abort       context.Context // cancel in-flight requests
	cancelAbort context.CancelFunc
	red         *Redactor
	src         *sessions
	anchor      time.Time
	model       string
	maxLen      int

	reserved atomic.Int64 // turns reserved against MaxRequests
	rngMu    sync.Mutex   // guards rng, the retries' backoff jitter
	rng      *mrand.Rand

	mu  sync.Mutex // guards seq, sum, err
	seq int64
	sum Summary
	err error // the first error: it ends the run
	// sendMu orders sends to w: records in seq order.
	sendMu sync.Mutex
	w      *writer
	// live figures for the progress line
	live liveStats

	// reached is set by the first attempt that got an HTTP response;
	// unreachable counts the attempts before it that could not connect.
	reached        atomic.Bool
	unreachable    atomic.Int64
	unreachableErr error // guarded by mu
	// hungOnce arms hungTimer at the first request (watchHung).
	hungOnce  sync.Once
	hungTimer atomic.Pointer[time.Timer]
}

// discover fills in the model and max_model_len from /v1/models.
func (r *runner) discover(ctx context.Context) error {
	r.model, r.maxLen = r.o.Model, r.o.MaxModelLen
	if r.model != "" && r.maxLen > 0 {
		return nil
	}
	models, err := r.c.models(ctx, r.o.ProbeTimeout)
	if err != nil {
		if unreachable(err) {
			return unreachableError(r.c.base, 1, err)
		}
		var hung *hungError
		if errors.As(err, &hung) {
			return err
		}
		if r.model == "" {
			return fmt.Errorf("no --model given and %w", err)
		}
		return nil // the context guard then stays off unless --max-model-len is set
	}
	if r.model == "" {
		if len(models) == 0 {
			return fmt.Errorf("no --model given and %s/models lists none", r.c.base)
		}
		r.model = models[0].ID
	}
	if r.maxLen == 0 {
		for _, m := range models {
			if m.ID == r.model {
				r.maxLen = m.MaxModelLen
			}
		}
	}
	return nil
}

// sessions hands out conversations in input order, recycling them with
// fresh ids when looping (it then keeps the first pass in memory).
type sessions struct {
	mu   sync.Mutex
	in   source.Source
	done bool // in is exhausted
	seen []*conv.Conversation
	// counts are the client token counts of seen's messages, kept for
	// the passes after the first (srcCounts).
	counts []srcCounts
	i      int // next of seen to recycle
	pass   int
	loop   bool
	// total is the number of sessions of in, when known (progress).
	total int
	// taken counts the sessions handed out: the next one's global index.
	taken int
}

// take returns the next conversation, the token counts its sessions
// share (nil: none kept), its id and its global index; false at the end,
// and on an error of the input (err).
func (s *sessions) take() (c *conv.Conversation, counts srcCounts, id string, index int, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		if next, ok := s.in.Next(); ok {
			c := &next
			if s.loop {
				counts = newSrcCounts(c)
				s.seen = append(s.seen, c)
				s.counts = append(s.counts, counts)
			}
			s.taken++
			return c, counts, c.ID, s.taken - 1, true, nil
		}
		s.done = true
		if err := s.in.Err(); err != nil {
			return nil, nil, "", 0, false, err
		}
	}
	if !s.loop || len(s.seen) == 0 {
		return nil, nil, "", 0, false, nil
	}
	if s.i == len(s.seen) {
		s.i = 0
	}
	if s.i == 0 {
		s.pass++
	}
	c, counts = s.seen[s.i], s.counts[s.i]
	s.i++
	s.taken++
	return c, counts, fmt.Sprintf("%s#%d", c.ID, s.pass), s.taken - 1, true, nil
}

// take takes the next conversation from the source; nil when the source
// is exhausted (or failed: the run then stops).
func (r *runner) take() *session {
	c, counts, id, index, ok, err := r.src.take()
	if err != nil {
		r.fail(err)
	}
	if !ok {
		return nil
	}
	return newSession(c, counts, id, index)
}

// owns reports whether this process runs s (Options.Owns); a session
// recycled by Loop keeps the index of its first pass.
func (r *runner) owns(s *session) bool {
	if r.o.Owns == nil {
		return true
	}
	i := s.plan.index
	r.src.mu.Lock()
	n := r.src.total
	if n == 0 && r.src.done {
		n = len(r.src.seen) // the input's length, known at its end when looping
	}
	r.src.mu.Unlock()
	if n > 0 {
		i %= n
	}
	return r.o.Owns(i)
}

// begin counts a session as started by client at offset start.
func (r *runner) begin(s *session, client int, start time.Duration) {
	s.client, s.plan.start = client, start
	r.mu.Lock()
	r.sum.Started++
	r.mu.Unlock()
}

// prepare readies the session's next turn; false means it has ended.
// The turn's send time is set by plan.
func (r *runner) prepare(s *session) bool {
	if s.ended {
		return false
	}
	t, ok := s.next(&r.o)
	if !ok {
		s.ended = true
		return false
	}
	s.cur = t
	return true
}

// reserve takes one request from the --max-requests budget.
func (r *runner) reserve() (int64, bool) {
	n := r.reserved.Add(1) - 1
	if r.o.MaxRequests > 0 && n >= int64(r.o.MaxRequests) {
		r.cancelStop()
		return n, false
	}
	return n, true
}

// due waits for the intended time of the session's next turn; false if
// the run stopped first or the turn falls at or after the end of the
// run's Duration (the end of a staged run's last stage), which the stop
// timer and the turn's own timer would otherwise race for.
func (r *runner) due(s *session) bool {
	if r.o.Duration > 0 && !s.ready.Before(r.anchor.Add(r.o.Duration)) {
		return false
	}
	return sleepUntil(r.stop, s.ready)
}

// sleepUntil waits for t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// lanes returns the global indexes of the closed lanes this process
// runs: Options.Lanes below the schedule's Users(), or all of them.
func (o *Options) lanes(sched schedule.Schedule) []int {
	n := sched.Users()
	if o.Lanes == nil {
		out := make([]int, n)
		for l := range out {
			out[l] = l
		}
		return out
	}
	var out []int
	for _, l := range o.Lanes {
		if l >= 0 && l < n {
			out = append(out, l)
		}
	}
	return out
}

// lanes runs the closed lanes (users) of the given global indexes, each
// keeping the schedule's number of sessions in progress and alternating
// between them, one request in flight per lane.
func (r *runner) lanes(lanes []int) {
	var wg sync.WaitGroup
	for _, c := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.lane(c, r.sched.Active(c))
		}()
	}
	wg.Wait()
}

// lane is one closed-loop user, of global index id.
func (r *runner) lane(id, quota int) {
	var active []*session
	rr, sent := 0, 0
	// Random sampling draws from the lane's own source (its global index
	// and the seed), so a lane picks alike in a segment and in the whole run.
	var rng *mrand.Rand
	if r.o.Sampling == SampleRandom {
		rng = segment.LaneRand(r.o.RandSeed, id)
	}
	var prev time.Duration // intended time of the lane's last turn
	var free time.Time     // end of the lane's last request (clientWait)
	defer func() {
		for _, s := range active {
			r.finish(s)
		}
	}()
	for {
		for len(active) < r.quota(id, quota) && r.stop.Err() == nil && r.open(id) {
			s := r.take()
			for s != nil && !r.owns(s) {
				s = r.take()
			}
			if s == nil {
				break
			}
			r.begin(s, id, time.Since(r.anchor))
			if r.prepare(s) {
				r.plan(s, sent, prev)
				active = append(active, s)
			} else {
				r.finish(s)
			}
		}
		if len(active) == 0 {
			if !r.waitOpen(id) {
				return
			}
			continue
		}
		i := pick(active, &rr, rng)
		s := active[i]
		req, ok := r.build(s)
		if !ok || !r.due(s) {
			return
		}
		prev = s.ready.Sub(r.anchor)
		s.free = free
		r.runTurn(s, req)
		free = s.lastEnd
		sent++
		if r.prepare(s) {
			r.plan(s, sent, prev)
		} else {
			r.finish(s)
			active = append(active[:i], active[i+1:]...)
		}
		if r.stop.Err() != nil {
			return
		}
	}
}

// quota returns how many sessions lane id keeps in progress now: the
// schedule's share for now when it changes over time (schedule.Quota),
// else fixed. A lane over a share that fell finishes the sessions it has
// before it takes another.
func (r *runner) quota(id, fixed int) int {
	q, ok := r.sched.(schedule.Quota)
	if !ok {
		return fixed
	}
	return q.ActiveAt(id, time.Since(r.anchor))
}

// open reports whether lane id may take a new session now (a staged
// schedule's lane above the current level may not).
func (r *runner) open(id int) bool {
	g, ok := r.sched.(schedule.Gated)
	if !ok {
		return true
	}
	now := time.Since(r.anchor)
	from, ok := g.Open(id, now)
	return ok && from <= now
}

// waitOpen waits until lane id, which has no session, may take one;
// false when it never may again (or the run stopped).
func (r *runner) waitOpen(id int) bool {
	g, ok := r.sched.(schedule.Gated)
	if !ok {
		return false
	}
	from, ok := g.Open(id, time.Since(r.anchor))
	return ok && sleepUntil(r.stop, r.anchor.Add(from))
}

// pick chooses the next conversation: the ready ones in rotation (at
// random when rng is not nil), else the one that becomes ready first.
func pick(active []*session, rr *int, rng *mrand.Rand) int {
	now := time.Now()
	var ready []int
	first := 0
	for i, s := range active {
		if !s.ready.After(now) {
			ready = append(ready, i)
		}
		if s.ready.Before(active[first].ready) {
			first = i
		}
	}
	if len(ready) == 0 {
		return first
	}
	if rng != nil {
		return ready[rng.IntN(len(ready))]
	}
	for _, i := range ready {
		if i >= *rr {
			*rr = i + 1
			return i
		}
	}
	*rr = ready[0] + 1
	return ready[0]
}

// finish writes a conversation that will send no more turns.
func (r *runner) finish(s *session) {
	if s.status == "" {
		switch {
		case !s.ended:
			s.status = "unfinished"
		case s.failed:
			s.status = "failed"
		default:
			s.status = "finished"
		}
	}
	r.mu.Lock()
	switch s.status {
	case "finished":
		r.sum.Finished++
	case "failed":
		r.sum.FailedConversations++
	case "abandoned":
		r.sum.Abandoned++
	default:
		r.sum.Unfinished++
	}
	r.mu.Unlock()
	// A conversation that sent nothing has no transcript to write (and
	// an empty one is not a valid conversation).
	if r.sink.Conversations != nil && len(s.transcript) > 0 {
		r.sendMu.Lock()
		r.w.send(item{conv: r.red.Conversation(s.output())})
		r.sendMu.Unlock()
	}
}

// writeFailed ends the run after a write error (see Run).
func (r *runner) writeFailed(records bool, err error) {
	r.fail(err)
	if records {
		r.cancelAbort()
	}
}
