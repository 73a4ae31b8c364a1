//go:build linux || darwin || freebsd || netbsd || openbsd

package httpwire

import (
	"net"
	"syscall"
	"testing"
	"time"
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
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err == nil {
					accepted <- c
				}
				close(accepted)
			}()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			sc, ok := <-accepted
			if !ok {
				t.Fatal("no connection accepted")
			}
			defer sc.Close()
			tc.server(sc)
			rc, err := rawConn(nc)
			if err != nil || rc == nil {
				t.Fatalf("rawConn: %v, %v", rc, err)
			}
			if !tc.want {
				// Wait (by a blocking peek of our own) until what the
				// server did has reached the socket.
				nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 1)
				raw, _ := nc.(*net.TCPConn).SyscallConn()
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

// peekReady peeks at fd without blocking; false (wait for readiness)
// while there is nothing to read.
func peekReady(fd uintptr, buf []byte) bool {
	_, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
}
