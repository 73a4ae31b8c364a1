//go:build linux || darwin || freebsd || netbsd || openbsd

package httpwire

import (
	"net"
	"syscall"
)

// rawConn returns the checker of nc's TCP connection (nil when nc has
// none, e.g. a net.Pipe).
func rawConn(nc net.Conn) (rawChecker, error) {
	if t, ok := nc.(netConner); ok {
		nc = t.NetConn()
	}
	sc, ok := nc.(sysConn)
	if !ok {
		return nil, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	p := &peekConn{rc: rc}
	p.fn = p.peek
	return p, nil
}

// peekConn checks a socket with one non-blocking MSG_PEEK receive.
type peekConn struct {
	rc   syscall.RawConn
	buf  [1]byte
	open bool                  // the last peek would have blocked
	fn   func(fd uintptr) bool // peek, made once (a closure per check would be allocated)
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
