package replay

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// FailFastAttempts is how many attempts may fail to connect (connection
// refused, unknown host, no route, dial timeout) before any attempt of the
// run has reached the server, before the run stops with an error rather
// than retrying every turn. Once one attempt got an HTTP response, connect
// failures are retried as usual (a server restarting mid-run).
const FailFastAttempts = 3

// unreachable reports whether err means that nothing answered at the
// server's address: DNS failed or the TCP connection could not be opened.
func unreachable(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// unreachableError is the error of a run that could not reach its server.
func unreachableError(base string, attempts int64, err error) error {
	n := ""
	if attempts > 1 {
		n = fmt.Sprintf(" (%d attempts, none connected)", attempts)
	}
	return fmt.Errorf("cannot reach the server at %s%s: %w; is it running, and is --url right?", base, n, err)
}

// stopIfUnreachable counts attempt a towards FailFastAttempts and reports
// whether the run has been stopped because the server cannot be reached.
func (r *runner) stopIfUnreachable(a *attempt) bool {
	if a.Status != 0 {
		r.reached.Store(true)
		return false
	}
	if a.Err == nil || !unreachable(a.Err) || r.reached.Load() {
		return false
	}
	n := r.unreachable.Add(1)
	if n < FailFastAttempts {
		return false
	}
	// Kept apart from r.err (r.fail), so that a write error, if one
	// came first, is the error reported.
	r.mu.Lock()
	if r.unreachableErr == nil {
		r.unreachableErr = unreachableError(r.c.base, n, a.Err)
	}
	r.mu.Unlock()
	r.cancelStop()
	return true
}

// DefaultProbeTimeout bounds the start-up GET /v1/models: a server that
// accepts connections but never answers is caught in seconds, not after
// the 30 s it waited before (issue 24).
const DefaultProbeTimeout = 5 * time.Second

// DefaultHungAfter is how long after the first request is sent the run
// waits for the first response head from the server. When none has come
// by then (every request so far accepted but unanswered), the run stops
// as for an unreachable server: without it each turn waited for
// --request-timeout (10 minutes). A server that has answered once is
// never judged hung; a long first answer is not a hang, its head comes
// at once.
const DefaultHungAfter = time.Minute

// hungError is the error of a run whose server accepts connections but
// sends nothing back.
type hungError struct {
	base  string
	what  string // what it did not do: "did not answer GET …/models"
	after time.Duration
}

func (e *hungError) Error() string {
	return fmt.Sprintf("the server at %s accepts connections but %s in %s; is it up (not still loading), and is --url right?", e.base, e.what, e.after)
}

// watchHung arms, at the first request sent, the check that stops the
// run when no response head has come DefaultHungAfter (o.HungAfter)
// later: no new turns, and the requests in flight are cancelled (their
// records say canceled).
func (r *runner) watchHung() {
	r.hungOnce.Do(func() {
		t := time.AfterFunc(r.o.HungAfter, func() {
			if r.c.answered.Load() || r.reached.Load() {
				return
			}
			r.mu.Lock()
			if r.unreachableErr == nil {
				r.unreachableErr = &hungError{base: r.c.base, what: "answered none of the requests", after: r.o.HungAfter}
			}
			r.mu.Unlock()
			r.cancelStop()
			r.cancelAbort()
		})
		r.hungTimer.Store(t)
	})
}
