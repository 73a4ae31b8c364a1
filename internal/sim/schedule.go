package sim

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mtkit/mtkit/internal/precise"
)

// admission caps the running sequences and queues the rest in FIFO order,
// like an engine's scheduler with a max_num_seqs limit.
type admission struct {
	mu      sync.Mutex
	limit   int // 0 = no cap
	used    int
	waiters list.List // of *waiter
	running atomic.Int64
	queued  atomic.Int64
	waited  atomic.Uint64 // requests that had to queue, ever
}

type waiter struct {
	n     int
	ready chan struct{}
}

// acquire waits until n sequences may run or ctx is done.
func (a *admission) acquire(ctx context.Context, n int) error {
	a.mu.Lock()
	if a.waiters.Len() == 0 && (a.limit == 0 || a.used+n <= a.limit) {
		a.used += n
		a.running.Add(int64(n))
		a.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	e := a.waiters.PushBack(w)
	a.queued.Add(1)
	a.waited.Add(1)
	a.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		a.mu.Lock()
		defer a.mu.Unlock()
		select {
		case <-w.ready: // admitted while giving up: hand the slots back
			a.used -= n
			a.running.Add(-int64(n))
		default:
			a.waiters.Remove(e)
			a.queued.Add(-1)
		}
		a.wakeLocked()
		return ctx.Err()
	}
}

// release returns n sequences and admits waiters that now fit.
func (a *admission) release(n int) {
	a.mu.Lock()
	a.used -= n
	a.running.Add(-int64(n))
	a.wakeLocked()
	a.mu.Unlock()
}

func (a *admission) wakeLocked() {
	for e := a.waiters.Front(); e != nil; e = a.waiters.Front() {
		w := e.Value.(*waiter)
		if a.limit > 0 && a.used+w.n > a.limit {
			return
		}
		a.used += w.n
		a.running.Add(int64(w.n))
		a.queued.Add(-1)
		a.waiters.Remove(e)
		close(w.ready)
	}
}

// spinWindow is how long a precise wait spins before its deadline (after
// a nanosleep: see package precise).
const spinWindow = 80 * time.Microsecond

// clock is the time source of a Server's schedule: the real clock, or a
// virtual one in tests, which then see the exact schedule whatever the
// load of the machine.
type clock interface {
	now() time.Time
	// pacer returns what waits for the deadlines of one request.
	pacer(precise bool) pacer
}

// pacer waits until absolute deadlines.
type pacer interface {
	// until waits until deadline or ctx is done, returning ctx.Err()
	// then. A deadline in the past returns at once.
	until(ctx context.Context, deadline time.Time) error
	stop()
}

// realClock is time.Now and sleepers.
type realClock struct{}

func (realClock) now() time.Time { return time.Now() }
func (realClock) pacer(p bool) pacer {
	s := &sleeper{}
	if p {
		s.Precise, s.Spin = true, spinWindow
	}
	return s
}

// sleeper is a precise.Sleeper as a pacer.
type sleeper struct{ precise.Sleeper }

func (s *sleeper) until(ctx context.Context, deadline time.Time) error {
	return s.Until(ctx, deadline)
}

func (s *sleeper) stop() { s.Stop() }
