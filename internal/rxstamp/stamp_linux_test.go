package rxstamp

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/tcptest"
)

// TestReadErrors: reads through a Reader fail as
// net.Conn reads do: a deadline is a timeout, a closed peer an EOF.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	nc, peer := tcptest.Pair(t)
	r := New(nc)
	if r == nil {
		t.Fatal("no Reader for a TCP connection")
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, err := r.Read(make([]byte, 8))
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	if oe, ok := err.(*net.OpError); !ok || oe.Op != "read" {
		t.Errorf("read past the deadline: %#v, want a read *net.OpError", err)
	}
	nc.SetReadDeadline(time.Time{})
	peer.Write([]byte("ab"))
	peer.Close()
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "ab" {
		t.Fatalf("ReadAll = %q, %v; want \"ab\", nil", got, err)
	}
}

// TestNewNotTCP: connections that are not plain TCP get no Reader.
func TestNewNotTCP(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if r := New(a); r != nil {
		t.Errorf("New(net.Pipe) = %v, want nil", r)
	}
}

// TestConnReceived: a Conn reads through its Reader, whose Received is
// when the bytes were in the socket (between the peer's write and the
// moment the test saw them queued), though the read came 20 ms after
// that; before any read it is the current time.
func TestConnReceived(t *testing.T) {
	t.Parallel()
	nc, peer := tcptest.Pair(t)
	r := New(nc)
	if r == nil {
		t.Fatal("no Reader for a TCP connection")
	}
	t0 := time.Now()
	if got := r.Received(); got.Before(t0) {
		t.Errorf("Received before any read = %v before the call", t0.Sub(got))
	}
	c := &Conn{Conn: nc, R: r}
	stamping(t, c, peer)
	before := time.Now()
	if _, err := peer.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	in := queued(t, nc)
	time.Sleep(20 * time.Millisecond) // the reader reads late
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	got := r.Received()
	// A millisecond's room either side for the wall and monotonic clocks'
	// drift (the kernel's stamp is on the wall clock).
	if got.Before(before.Add(-time.Millisecond)) || got.After(in.Add(time.Millisecond)) {
		t.Errorf("Received %v after the write began; the bytes were seen queued %v after it", got.Sub(before), in.Sub(before))
	}
}

// queued waits until nc has bytes to read (checked with a non-blocking
// MSG_PEEK, which takes nothing) and returns the time it saw them: the
// kernel had delivered, and stamped, them by then. On a loaded machine
// the kernel may deliver loopback segments well after the sender's write
// (its deferred network processing), so tests compare stamps with this
// time, not with the write's.
func queued(t testing.TB, nc net.Conn) time.Time {
	t.Helper()
	rc, err := nc.(interface {
		SyscallConn() (syscall.RawConn, error)
	}).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		n := 0
		rc.Control(func(fd uintptr) {
			n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		})
		if n > 0 {
			return time.Now()
		}
	}
	t.Fatal("no bytes arrived in 10 s")
	return time.Time{}
}

// stamping waits until the kernel stamps what c reads (it starts a
// moment after the first socket of the machine asks), with single bytes
// the peer writes and c reads.
func stamping(t *testing.T, c *Conn, peer net.Conn) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := peer.Write([]byte{0}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		if _, kernel := c.R.stamp(); kernel { // the last read's message again
			return
		}
	}
	t.Fatal("the kernel stamped no read in 10 s")
}
