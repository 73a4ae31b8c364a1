//go:build linux || darwin || freebsd || netbsd || openbsd

package httpwire

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/tcptest"
)

// TestPeekIdle checks the pooled-connection check on a real loopback
// socket: open and quiet is idle, with no allocation per check; data or a
// close from the server is not.
func TestPeekIdle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(net.Conn) // what the server does before the check
		want   bool
	}{
		{"quiet", func(net.Conn) {}, true},
		{"data", func(c net.Conn) { c.Write([]byte("x")) }, false},
		{"closed", func(c net.Conn) { c.Close() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, sc := tcptest.Pair(t)
			tc.server(sc)
			rc, _, err := rawConn(nc)
			if err != nil || rc == nil {
				t.Fatalf("rawConn: %v, %v", rc, err)
			}
			if !tc.want {
				// Wait (by a blocking peek of our own) until what the
				// server did has reached the socket.
				nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 1)
				raw, _ := nc.SyscallConn()
				raw.Read(func(fd uintptr) bool { return peekReady(fd, buf) })
			}
			if got := rc.idle(); got != tc.want {
				t.Fatalf("idle() = %v, want %v", got, tc.want)
			}
			if tc.want {
				if n := testing.AllocsPerRun(100, func() { rc.idle() }); n != 0 {
					t.Errorf("%v allocations per check, want 0", n)
				}
			}
		})
	}
}

// TestSendWait checks the request write on a real loopback socket: all
// written, it returns once the answer is readable (and not before); a
// request larger than the socket's buffers is left for the caller to
// finish; a write on a connection the server reset is a net.OpError
// "write"; a deadline ends the wait.
func TestSendWait(t *testing.T) {
	t.Run("answer", func(t *testing.T) {
		nc, sc := tcptest.Pair(t)
		_, s, err := rawConn(nc)
		if err != nil || s == nil {
			t.Fatalf("rawConn: %v, %v", s, err)
		}
		got := make(chan []byte)
		go func() {
			buf := make([]byte, 5)
			_, err := io.ReadFull(sc, buf)
			if err != nil {
				buf = nil
			}
			got <- buf
		}()
		type result struct {
			n    int
			done bool
			err  error
		}
		res := make(chan result)
		go func() {
			n, done, err := s.sendWait([]byte("hello"))
			res <- result{n, done, err}
		}()
		if b := <-got; string(b) != "hello" {
			t.Fatalf("server read %q", b)
		}
		select {
		case r := <-res:
			t.Fatalf("sendWait returned %+v before the answer", r)
		default:
		}
		sc.Write([]byte("world"))
		r := <-res
		if r.n != 5 || !r.done || r.err != nil {
			t.Fatalf("sendWait = %+v, want 5, done, no error", r)
		}
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 5)
		if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "world" {
			t.Fatalf("answer %q, %v", buf, err)
		}
	})
	t.Run("buffer full", func(t *testing.T) {
		nc, _ := tcptest.Pair(t)
		nc.SetWriteBuffer(4 << 10)
		_, s, _ := rawConn(nc)
		big := make([]byte, 64<<20) // the server reads nothing
		n, done, err := s.sendWait(big)
		if done || err != nil || n <= 0 || n >= len(big) {
			t.Fatalf("sendWait = %d, %v, %v; want part written, not done, no error", n, done, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		nc, sc := tcptest.Pair(t)
		sc.SetLinger(0)
		sc.Close() // RST
		// Wait until the reset has reached the client's socket.
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		raw, _ := nc.SyscallConn()
		raw.Read(func(fd uintptr) bool { return peekReady(fd, make([]byte, 1)) })
		_, s, _ := rawConn(nc)
		n, done, err := s.sendWait([]byte("hello"))
		var oe *net.OpError
		if n != 0 || done || !errors.As(err, &oe) || oe.Op != "write" {
			t.Fatalf("sendWait = %d, %v, %v; want 0, not done, a write OpError", n, done, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		nc, _ := tcptest.Pair(t)
		_, s, _ := rawConn(nc)
		nc.SetDeadline(time.Now().Add(20 * time.Millisecond)) // the server never answers
		n, done, err := s.sendWait([]byte("hello"))
		if n != 5 || !done || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("sendWait = %d, %v, %v; want 5, done, deadline exceeded", n, done, err)
		}
	})
}

// peekReady peeks at fd without blocking; false (wait for readiness)
// while there is nothing to read.
func peekReady(fd uintptr, buf []byte) bool {
	_, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
}
