package httpwire

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestReceivedIsArrival: a response's Received is when its bytes reached
// the machine (the kernel's stamp, taken within the server's write on
// loopback), not when the client read them: the client reads a chunk
// at least 20 ms after the server wrote it, and Received lies within the
// write. Received moves on with each chunk read.
func TestReceivedIsArrival(t *testing.T) {
	t.Parallel()
	type span struct{ before, after time.Time }
	written := make(chan span)
	next := make(chan struct{})
	u := rawServer(t, func(c net.Conn, _ *http.Request) bool {
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"); err != nil {
			return false
		}
		for _, chunk := range []string{"5\r\nfirst\r\n", "6\r\nsecond\r\n0\r\n\r\n"} {
			<-next
			s := span{before: time.Now()}
			if _, err := io.WriteString(c, chunk); err != nil {
				return false
			}
			s.after = time.Now()
			written <- s
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
	for i, want := range []string{"first", "second"} {
		next <- struct{}{}
		w := <-written
		time.Sleep(20 * time.Millisecond) // the client reads late
		read := time.Now()
		n, err := io.ReadFull(resp.Body, buf[:len(want)])
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("chunk %d: %q, %v", i, buf[:n], err)
		}
		got := resp.Received()
		// A millisecond's room either side for the wall and monotonic
		// clocks' drift (the kernel's stamp is on the wall clock).
		if got.Before(w.before.Add(-time.Millisecond)) || got.After(w.after.Add(time.Millisecond)) {
			t.Errorf("chunk %d: Received %v after the write began, which took %v; the read came %v after it began",
				i, got.Sub(w.before), w.after.Sub(w.before), read.Sub(w.before))
		}
	}
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 0 {
		t.Fatalf("rest of body: %q, %v", b, err)
	}
}
