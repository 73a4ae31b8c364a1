package httpwire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/cputime"
)

// cannedSSE is a streamed answer of n chunks, as the simulator sends it
// (chunked transfer coding, one SSE event per chunk).
func cannedSSE(n int) []byte {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nDate: Tue, 24 Nov 2026 04:00:00 GMT\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := range n + 1 {
		ev := fmt.Sprintf(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok%d"},"finish_reason":null}]}`+"\n\n", i)
		if i == n {
			ev = "data: [DONE]\n\n"
		}
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(ev), ev)
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// BenchmarkPostStream is the client side of one streamed completion
// (a 1 KB body posted, a 32-chunk SSE answer read to its end) on a
// keep-alive connection, by net/http's Transport as replay configured it
// and by this client. The server answers from a goroutine with one write
// of a canned response, so most of the time measured is the client's:
// compare ns/op, allocs/op, and the CPU profile's share of the client.
func BenchmarkPostStream(b *testing.B) {
	resp := cannedSSE(32)
	u := rawServer(b, func(c net.Conn, _ *http.Request) bool {
		_, err := c.Write(resp)
		return err == nil
	})
	u += "/v1/chat/completions"
	body := bytes.Repeat([]byte("x"), 1024)
	hdr := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer sk-test"}}
	sink := make([]byte, 32<<10)
	b.Run("nethttp", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true,
			DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
			for k, v := range hdr {
				req.Header[k] = v
			}
			r, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r.Body, sink)
			cancel()
		}
	})
	b.Run("httpwire", func(b *testing.B) {
		c := newTest(b, u, nil)
		h := mustRender(b, hdr)
		b.ReportAllocs()
		defer reportCPU(b)()
		ctx, cancel := context.WithCancel(context.Background()) // as replay's abort context
		defer cancel()
		for b.Loop() {
			r, err := c.PostBy(ctx, time.Now().Add(time.Minute), h, body)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r.Body, sink)
		}
	})
}

// drain reads a body to its end, as the SSE reader does, and closes it.
func drain(b *testing.B, r io.ReadCloser, buf []byte) {
	n := 0
	for {
		m, err := r.Read(buf)
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	r.Close()
	if n == 0 {
		b.Fatal("empty body")
	}
}

// reportCPU reports the process's CPU time (user+system, both ends of the
// exchange) per operation as cpu-ns/op: steadier than wall time on a
// shared machine. Call it after setup and defer what it returns.
func reportCPU(b *testing.B) func() {
	start := cputime.Process()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
