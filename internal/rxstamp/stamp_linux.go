package rxstamp

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Reader reads a TCP connection with recvmsg and keeps the kernel's
// receive stamp of the bytes read last. Reads are not safe for
// concurrent use; Received is, with a read.
type Reader struct {
	rc syscall.RawConn
	nc net.Conn // for the addresses of read errors

	// One read's state, and recv made once (a closure per read would be
	// allocated).
	msg    syscall.Msghdr
	iov    syscall.Iovec
	oob    [64]byte // room for one SCM_TIMESTAMPNS message
	n      int
	rerr   error
	recvFn func(fd uintptr) bool

	last atomic.Int64 // the stamp of the last read, since anchor (0: none yet)
}

// New turns on SO_TIMESTAMPNS on nc, a plain TCP connection (not TLS
// over one), and returns a reader of it; nil when nc is not one, the
// option is refused, or the system has no such stamps (not Linux).
func New(nc net.Conn) *Reader {
	sc, ok := nc.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	r := &Reader{rc: rc, nc: nc}
	r.recvFn = r.recv
	return r
}

// Received is when the bytes read last reached the machine, on this
// process's monotonic clock: the kernel's stamp of the last segment of
// the last read, or that read's return when the kernel gave none (the
// current time before any read). It is never later than the read's
// return, never earlier than the arrival of the last byte read.
func (r *Reader) Received() time.Time {
	ns := r.last.Load()
	if ns == 0 {
		return time.Now()
	}
	return anchor.Add(time.Duration(ns))
}

// Read reads into p as net.Conn.Read does (deadlines and errors alike)
// and sets the stamp of the bytes read.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.n, r.rerr = 0, nil
	err := r.rc.Read(r.recvFn)
	r.iov.Base = nil
	if err != nil {
		if oe, ok := err.(*net.OpError); ok {
			oe.Op = "read" // not "raw-read": the error net.Conn.Read gives
		}
		return 0, err
	}
	if r.rerr != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: r.nc.LocalAddr(), Addr: r.nc.RemoteAddr(),
			Err: os.NewSyscallError("read", r.rerr)}
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	return r.n, nil
}

// recv is the RawConn.Read callback of Read: one non-blocking recvmsg;
// false (wait for the poller) when there is nothing to read.
func (r *Reader) recv(fd uintptr) bool {
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	r.msg.Flags = 0
	for {
		n, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), syscall.MSG_DONTWAIT)
		switch e {
		case 0:
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			r.rerr = e
			return true
		}
		r.n = int(n)
		if raceEnabled {
			// The race detector takes a socket's read to happen after
			// the process's writes before it (syscall.Read and Write say
			// so), but knows nothing of recvmsg: a zero-length read says
			// it here, so that what a test's server did before writing
			// is seen as done before the client read it.
			syscall.Read(int(fd), nil)
		}
		if r.n > 0 {
			// Stamps of one connection never go back (the bytes came in
			// order; a step of the wall clock could otherwise reorder
			// them).
			d, _ := r.stamp()
			r.last.Store(max(int64(d), r.last.Load(), 1))
		}
		return true
	}
}

// stamp is the kernel's receive time in the control message of the last
// recvmsg, since anchor on the monotonic clock; the current time when
// there is none (or the wall clock stepped back past it). kernel reports
// whether the message held the kernel's stamp (the kernel starts stamping
// for the whole machine a moment after the first socket asks it to:
// reads before then are stamped when read).
func (r *Reader) stamp() (d time.Duration, kernel bool) {
	t := time.Now()
	now := t.Sub(anchor) // monotonic
	var h syscall.Cmsghdr
	hl := int(unsafe.Sizeof(h))
	var ts syscall.Timespec
	if int(r.msg.Controllen) < hl+int(unsafe.Sizeof(ts)) {
		return now, false
	}
	h = *(*syscall.Cmsghdr)(unsafe.Pointer(&r.oob[0]))
	if h.Level != syscall.SOL_SOCKET || h.Type != syscall.SCM_TIMESTAMPNS || int(h.Len) < hl+int(unsafe.Sizeof(ts)) {
		return now, false
	}
	ts = *(*syscall.Timespec)(unsafe.Pointer(&r.oob[cmsgAlign(hl)]))
	// How long the bytes waited, on the wall clock (the kernel's), taken
	// off the monotonic now: durations between stamps are immune to steps
	// of the wall clock, as time.Now's are.
	held := t.Sub(time.Unix(int64(ts.Sec), int64(ts.Nsec)))
	if held < 0 || held > maxHeld {
		return now, true
	}
	return now - held, true
}

// cmsgAlign rounds n up to the alignment of control messages.
func cmsgAlign(n int) int {
	const a = int(unsafe.Sizeof(uintptr(0)))
	return (n + a - 1) &^ (a - 1)
}
