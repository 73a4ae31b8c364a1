// Package tcptest gives tests a real loopback TCP connection, for code
// that works on the socket itself (receive timestamps, peeks, sends
// whose wait depends on the kernel's buffers) where net.Pipe will not do.
package tcptest

import (
	"net"
	"testing"
)

// Pair returns both ends of a loopback TCP connection on 127.0.0.1: the
// client that dialled and the server's accepted end, both closed when
// the test ends.
func Pair(t testing.TB) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	sc := <-accepted
	if sc == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { sc.Close() })
	return nc.(*net.TCPConn), sc.(*net.TCPConn)
}
