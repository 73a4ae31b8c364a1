package httpwire

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// outcome is what a client made of one raw response.
type outcome struct {
	postErr bool
	status  int
	body    string
	bodyErr bool
}

// FuzzResponse serves arbitrary bytes as the answer to a POST and checks
// this client reads them as net/http's Transport does: the same error or
// not before the body, the same status, body bytes and body error or not.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		string(cannedSSE(2)),
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
		"HTTP/1.1 200 OK\r\n\r\nclose-delimited",
		"HTTP/1.0 404 Not Found\r\n\r\nx",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/2 200\r\n\r\n",
		"garbage",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// In-memory connections (no ports to run out of): each gets one
		// request and the raw bytes, then is closed.
		dial := func(context.Context, string, string) (net.Conn, error) {
			cli, srv := net.Pipe()
			go func() {
				defer srv.Close()
				if r, err := http.ReadRequest(bufio.NewReader(srv)); err == nil {
					io.Copy(io.Discard, r.Body)
					srv.Write(raw)
				}
			}()
			return cli, nil
		}
		const u = "http://127.0.0.1:9/v1/completions"
		want := viaNetHTTP(u, dial)
		got := viaWire(t, u, dial)
		if got != want {
			t.Fatalf("response %q:\nhttpwire %+v\nnet/http %+v", raw, got, want)
		}
	})
}

// dialer is a DialContext function.
type dialer = func(ctx context.Context, network, addr string) (net.Conn, error)

func viaNetHTTP(u string, dial dialer) outcome {
	tr := &http.Transport{DisableCompression: true, DialContext: dial}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader([]byte("{}")))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return outcome{postErr: true}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return outcome{status: resp.StatusCode, body: string(b), bodyErr: err != nil}
}

func viaWire(t *testing.T, u string, dial dialer) outcome {
	c := newTest(t, u, nil)
	c.dialFn = dial
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Post(ctx, Header{}, []byte("{}"))
	if err != nil {
		return outcome{postErr: true}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return outcome{status: resp.StatusCode, body: string(b), bodyErr: err != nil}
}
