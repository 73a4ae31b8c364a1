package tcptest

import (
	"io"
	"testing"
)

// TestPair: what one end writes, the other reads, both ways; the ends
// are each other's peers.
func TestPair(t *testing.T) {
	t.Parallel()
	c, s := Pair(t)
	if c.LocalAddr().String() != s.RemoteAddr().String() || s.LocalAddr().String() != c.RemoteAddr().String() {
		t.Fatalf("client %v→%v, server %v→%v: not one connection", c.LocalAddr(), c.RemoteAddr(), s.LocalAddr(), s.RemoteAddr())
	}
	for _, dir := range []struct {
		name     string
		from, to io.ReadWriter
	}{{"client to server", c, s}, {"server to client", s, c}} {
		if _, err := dir.from.Write([]byte("ping")); err != nil {
			t.Fatalf("%s: %v", dir.name, err)
		}
		got := make([]byte, 4)
		if _, err := io.ReadFull(dir.to, got); err != nil || string(got) != "ping" {
			t.Errorf("%s: read %q, %v", dir.name, got, err)
		}
	}
}
