package replay

import (
	"errors"
	"fmt"
	"net"
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
