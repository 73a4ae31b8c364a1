package replay

import (
	"cmp"
	"runtime"
	"sync"
	"time"

	"github.com/mtkit/mtkit/internal/precise"
	"github.com/mtkit/mtkit/internal/schedule"
)

// The look-ahead window of arrivals: sessions read from the source, and
// their first requests built, before their start times. A trace source
// synthesizes each prompt from its hash blocks when its session is read
// (tens of milliseconds for a long one), and building a request counts
// its tokens and encodes its body: done at the start time, one after
// another, that work made the sessions of a burst late by tens of
// milliseconds (issue 26). The window is bounded in sessions and in
// bytes (prompt text and bodies held), so an input of any length replays
// in bounded memory.
const (
	// AheadSessions is the most sessions read ahead.
	AheadSessions = 1024
	// AheadBytes bounds the text and request bodies of the sessions read
	// ahead (the window always holds at least one session).
	AheadBytes = 64 << 20
	// aheadStart is how far into the schedule the window is filled before
	// the run's clock starts.
	aheadStart = time.Second
	// aheadMargin is the most time kept free before the next start,
	// beyond twice the longest recent build, when the window is filled
	// between starts (eight builds' time when that is less, so that cheap
	// sessions are read ahead between starts a millisecond apart): on a
	// loaded machine a build's wall time varies (with the longest recent
	// build plus 1 ms, whole bursts of a trace went 10-100 ms late at load
	// 33; with twice it plus 10 ms, p99 4-12 ms).
	aheadMargin = 10 * time.Millisecond
)

// aheadBounds bounds a look-ahead window.
type aheadBounds struct{ sessions, bytes int }

// arrival is a session read ahead of its start time, with its first
// turn's request built.
type arrival struct {
	s       *session
	at      time.Duration // start offset
	hasTurn bool
	req     *request // the first turn's (nil without a turn)
	bytes   int      // text and body held
}

// window is the look-ahead queue of arrivals, in start order.
type window struct {
	max   aheadBounds
	q     []arrival
	head  int
	bytes int
	// cost is the longest recent time to yield, then read and build one
	// arrival (decaying by an eighth per arrival): the window is filled between
	// starts only while the next start leaves twice that much time and a
	// margin (see aheadMargin).
	cost time.Duration
}

func (w *window) len() int { return len(w.q) - w.head }

func (w *window) push(a arrival) {
	if w.head > 0 && w.head == len(w.q) {
		w.q, w.head = w.q[:0], 0
	}
	w.q = append(w.q, a)
	w.bytes += a.bytes
}

func (w *window) pop() arrival {
	a := w.q[w.head]
	w.q[w.head] = arrival{}
	w.head++
	w.bytes -= a.bytes
	return a
}

// full reports whether the window has no room for another session.
func (w *window) full() bool {
	return w.len() >= w.max.sessions || (w.len() > 0 && w.bytes >= w.max.bytes)
}

// leaves reports whether the next start, at deadline, leaves time to
// read and build one more arrival first.
func (w *window) leaves(deadline time.Time) bool {
	return time.Until(deadline) > 2*w.cost+min(aheadMargin, 8*w.cost)
}

// newWindow returns the look-ahead window of arrivals, empty.
func (r *runner) newWindow() *window {
	return &window{max: aheadBounds{cmp.Or(r.o.ahead.sessions, AheadSessions), cmp.Or(r.o.ahead.bytes, AheadBytes)}}
}

// prefill reads ahead, before the run's clock starts, the sessions that
// start within aheadStart of the first one (up to the window's bounds):
// a trace's first burst is not late by the time its prompts take.
func (r *runner) prefill(w *window, arr schedule.Arrivals) (more bool) {
	more = true
	for more && !w.full() && r.stop.Err() == nil {
		if w.len() > 0 && w.q[len(w.q)-1].at-w.q[w.head].at > aheadStart {
			break
		}
		var a arrival
		if a, more = r.readAhead(arr); more {
			w.push(a)
		}
	}
	return more
}

// arrivals starts sessions at the schedule's arrival times; each is its
// own user (its client is its global index), sending its turns one after
// the other. Sessions are read from the source, and their first requests
// built, ahead of their start times (see AheadSessions) into w, which
// prefill has filled; more is false when the source or the schedule
// ended then. A session is counted as started at its start time.
func (r *runner) arrivals(arr schedule.Arrivals, w *window, more bool) {
	var (
		wg  sync.WaitGroup
		sem chan struct{}
	)
	if r.o.MaxInFlight > 0 {
		sem = make(chan struct{}, r.o.MaxInFlight)
	}
	// Arrivals are waited for precisely: on Go's timer alone they were
	// sent a median 0.5-1.0 ms late at 50-500/s (its millisecond
	// granularity when the process is idle). Arrivals less than
	// precise.Coarse apart keep the timer (see precise.Sleeper.TimerOnly).
	wake := precise.Sleeper{Precise: true, TimerOnly: precise.Coarse}
	defer wake.Stop()
	for r.stop.Err() == nil {
		for more && !w.full() && (w.len() == 0 || w.leaves(r.anchor.Add(w.q[w.head].at))) {
			// Sessions started just now run first: they send their
			// requests, then this goroutine reads on. The yield counts
			// in the cost: on a busy process it leaves less room.
			t0 := time.Now()
			runtime.Gosched()
			var a arrival
			if a, more = r.readAhead(arr); more {
				w.push(a)
			}
			w.cost = max(w.cost-w.cost/8, time.Since(t0))
		}
		if w.len() == 0 {
			break
		}
		a := w.pop()
		if wake.Until(r.stop, r.anchor.Add(a.at)) != nil {
			break
		}
		s := a.s
		if sem != nil {
			select {
			case sem <- struct{}{}:
			default:
				// Every slot is taken: the wait for one is the client's
				// (clientWait), not the generator's lateness.
				select {
				case sem <- struct{}{}:
					s.free = time.Now()
				case <-r.stop.Done():
				}
			}
			if r.stop.Err() != nil {
				break
			}
		}
		r.begin(s, s.plan.index, a.at)
		if a.hasTurn {
			r.plan(s, 0, 0)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sem != nil {
				defer func() { <-sem }()
			}
			req := a.req
			for turn := a.hasTurn; turn; turn = r.prepare(s) {
				if req == nil {
					r.plan(s, 0, 0)
					var ok bool
					if req, ok = r.build(s); !ok {
						break
					}
				}
				if !r.due(s) {
					break
				}
				r.runTurn(s, req)
				req = nil
				if r.stop.Err() != nil {
					break
				}
			}
			r.finish(s)
		}()
	}
	wg.Wait()
}

// readAhead reads the next session this process runs from the source,
// draws its start time and builds its first turn's request; false at the
// end of the source or of the schedule, or when building failed (the
// run then stops).
func (r *runner) readAhead(arr schedule.Arrivals) (arrival, bool) {
	for {
		s := r.take()
		if s == nil {
			return arrival{}, false
		}
		hasTurn := r.prepare(s)
		first := schedule.Turn{User: s.plan.index, Session: s.plan.index}
		if hasTurn {
			first = r.turn(s, 0, 0)
		}
		at, ok := arr.Next(first)
		if !ok {
			return arrival{}, false
		}
		if !r.owns(s) {
			continue // another segment's: its arrival time was drawn, as in the whole run
		}
		a := arrival{s: s, at: at, hasTurn: hasTurn}
		for _, m := range s.src.Messages {
			a.bytes += len(m.Content)
		}
		if hasTurn {
			s.client, s.plan.start = s.plan.index, at
			if a.req, ok = r.build(s); !ok {
				return arrival{}, false
			}
			a.bytes += len(a.req.body)
		}
		return a, true
	}
}
