//go:build linux || darwin || freebsd || netbsd || openbsd

package httpwire

import (
	"net"
	"os"
	"syscall"
)

// rawConn returns the checker of nc's TCP connection (nil when nc has
// none, e.g. a net.Pipe), and its sender when nc is the TCP connection
// itself (not TLS over it: the bytes written must be nc's own).
func rawConn(nc net.Conn) (rawChecker, rawSender, error) {
	plain := true
	if t, ok := nc.(netConner); ok {
		nc = t.NetConn()
		plain = false
	}
	sc, ok := nc.(sysConn)
	if !ok {
		return nil, nil, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	p := &peekConn{rc: rc, nc: nc}
	p.fn = p.peek
	p.sendFn = p.send
	if !plain {
		return p, nil, nil
	}
	return p, p, nil
}

// peekConn checks a socket with one non-blocking MSG_PEEK receive, and
// writes requests on it (sendWait).
type peekConn struct {
	rc   syscall.RawConn
	nc   net.Conn // for the addresses of write errors
	buf  [1]byte
	open bool                  // the last peek would have blocked
	fn   func(fd uintptr) bool // peek, made once (a closure per check would be allocated)

	// sendWait's state, and send made once.
	out    []byte
	sent   int
	werr   error
	done   bool // all of out was written
	sendFn func(fd uintptr) bool
}

// idle is true when the peek would block: the socket is open and holds
// no data (an EOF, data or an error all mean the connection is not fit
// to send a request on).
func (p *peekConn) idle() bool {
	p.open = false
	err := p.rc.Read(p.fn)
	return err == nil && p.open
}

// peek is the RawConn.Read callback of idle.
func (p *peekConn) peek(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	return true // never wait for readiness
}

// sendWait writes b with non-blocking writes and, once all of it is out,
// waits until the socket is readable, within one RawConn.Read: the
// poller's readiness is reset before the write, so an answer arriving
// right after it is not missed, and the read that would find nothing
// (EAGAIN) between writing a request and its answer is not made. When
// the socket's buffer takes only part of b, done is false and the
// caller writes the rest (n is how much went out). err is the write's
// error, as net.Conn.Write gives it, or the wait's.
func (p *peekConn) sendWait(b []byte) (n int, done bool, err error) {
	p.out, p.sent, p.werr, p.done = b, 0, nil, false
	err = p.rc.Read(p.sendFn)
	n, done = p.sent, p.done
	p.out = nil
	if p.werr != nil {
		return n, false, &net.OpError{Op: "write", Net: "tcp", Source: p.nc.LocalAddr(), Addr: p.nc.RemoteAddr(),
			Err: os.NewSyscallError("write", p.werr)}
	}
	return n, done, err
}

// send is the RawConn.Read callback of sendWait: the first call writes,
// and returns false (wait for readiness) when all was written; the next
// call, once the socket is readable, ends the wait.
func (p *peekConn) send(fd uintptr) bool {
	if p.done {
		return true
	}
	for p.sent < len(p.out) {
		m, err := syscall.Write(int(fd), p.out[p.sent:])
		if m > 0 {
			p.sent += m
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			return true // the socket's buffer is full: the caller writes the rest
		case err != nil:
			p.werr = err
			return true
		case m == 0:
			p.werr = syscall.EIO // a zero write without an error: not expected of a socket
			return true
		}
	}
	p.done = true
	return false
}
