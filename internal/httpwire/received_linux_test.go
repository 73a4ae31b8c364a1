package httpwire

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestReceivedIsArrival: a response's Received is the receive stamp of
// the bytes read last (internal/rxstamp tests that it is the kernel's,
// not the read's): not earlier than the server's write, not later than
// the read, unchanged until the next read, and never going back.
func TestReceivedIsArrival(t *testing.T) {
	t.Parallel()
	written := make(chan time.Time)
	next := make(chan struct{})
	u := rawServer(t, func(c net.Conn, _ *http.Request) bool {
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"); err != nil {
			return false
		}
		for _, chunk := range []string{"5\r\nfirst\r\n", "6\r\nsecond\r\n0\r\n\r\n"} {
			<-next
			before := time.Now()
			if _, err := io.WriteString(c, chunk); err != nil {
				return false
			}
			written <- before
		}
		return true
	})
	c := newTest(t, u, nil)
	resp, err := c.Post(context.Background(), Header{}, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Received == nil {
		t.Fatal("Received is nil")
	}
	buf := make([]byte, 64)
	var prev time.Time
	for i, want := range []string{"first", "second"} {
		next <- struct{}{}
		before := <-written
		time.Sleep(5 * time.Millisecond) // the client reads late
		n, err := io.ReadFull(resp.Body, buf[:len(want)])
		read := time.Now()
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("chunk %d: %q, %v", i, buf[:n], err)
		}
		got := resp.Received()
		// A millisecond's room for the wall and monotonic clocks' drift
		// (the kernel's stamp is on the wall clock).
		if got.Before(before.Add(-time.Millisecond)) || got.After(read) || got.Before(prev) {
			t.Errorf("chunk %d: Received %v after the write began; the read returned %v after it; the previous stamp %v",
				i, got.Sub(before), read.Sub(before), prev.Sub(before))
		}
		time.Sleep(2 * time.Millisecond)
		if again := resp.Received(); !again.Equal(got) {
			t.Errorf("chunk %d: Received moved from %v to %v without a read", i, got, again)
		}
		prev = got
	}
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 0 {
		t.Fatalf("rest of body: %q, %v", b, err)
	}
}
