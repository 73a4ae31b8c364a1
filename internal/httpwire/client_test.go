package httpwire

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newTest returns a client for srv's URL + path.
func newTest(t testing.TB, rawURL string, tlsConf *tls.Config) *Client {
	t.Helper()
	c, err := New(Config{URL: rawURL, TLS: tlsConf, MaxIdle: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

func mustRender(t testing.TB, hs ...http.Header) Header {
	t.Helper()
	h, ok := Render(hs...)
	if !ok {
		t.Fatalf("Render(%v) refused", hs)
	}
	return h
}

// readAll reads and closes a response body.
func readAll(t testing.TB, r *Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return string(b)
}

// TestPostBodies: chunked, Content-Length and close-delimited bodies, and
// statuses with no body, come back whole, with their status and header.
func TestPostBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		raw     string // a raw response instead of handler
		status  int
		body    string
	}{
		{name: "chunked", status: 200, body: "data: a\n\ndata: b\n\n", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: a\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: b\n\n")
		}},
		{name: "content-length", status: 200, body: `{"ok":true}`, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "11")
			io.WriteString(w, `{"ok":true}`)
		}},
		{name: "error status", status: 429, body: "slow down", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			io.WriteString(w, "slow down")
		}},
		{name: "no content", status: 204, handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }},
		{name: "close-delimited", status: 200, body: "until the end", raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"},
		{name: "http/1.0", status: 200, body: "old", raw: "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold"},
		{name: "1xx skipped", status: 200, body: "x", raw: "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"},
		{name: "chunked with trailer", status: 200, body: "abc", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var u string
			if tc.raw != "" {
				u = rawServer(t, func(c net.Conn, _ *http.Request) bool {
					io.WriteString(c, tc.raw)
					return false
				})
			} else {
				srv := httptest.NewServer(tc.handler)
				t.Cleanup(srv.Close)
				u = srv.URL
			}
			c := newTest(t, u+"/v1/chat/completions", nil)
			r, err := c.Post(context.Background(), Header{}, []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode != tc.status {
				t.Errorf("status %d, want %d", r.StatusCode, tc.status)
			}
			if got := readAll(t, r); got != tc.body {
				t.Errorf("body %q, want %q", got, tc.body)
			}
			if tc.status == 429 && r.Header.Get("Retry-After") != "2" {
				t.Errorf("header %v: no Retry-After", r.Header)
			}
		})
	}
}

// TestPostRequestBytes: the request on the wire is what net/http's
// Transport writes for the same request (DisableCompression), byte for
// byte, fixed and session headers merged.
func TestPostRequestBytes(t *testing.T) {
	t.Parallel()
	// A capturing listener: the raw bytes of one request, then a reply.
	// One listener for both, so that the Host lines agree.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	capture := func(t *testing.T, send func(url string)) []byte {
		out := make(chan []byte, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				out <- nil
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			var raw []byte
			n := 0
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					out <- nil
					return
				}
				raw = append(raw, line...)
				if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
					n, _ = strconv.Atoi(strings.TrimSpace(v))
				}
				if line == "\r\n" {
					break
				}
			}
			b := make([]byte, n)
			io.ReadFull(br, b)
			out <- append(raw, b...)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}()
		send("http://" + ln.Addr().String() + "/v1/chat/completions?x=1")
		return <-out
	}
	fixed := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer k"}, "X-A": {"1"}, "X-B": {" padded\t", "two", "\u00a0nbsp\u00a0"}}
	session := http.Header{"X-Session-Id": {"s1"}, "X-A": {"replaced"}}
	body := []byte(`{"model":"m","messages":[]}`)
	want := capture(t, func(u string) {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(string(body)))
		for k, v := range fixed {
			req.Header[k] = v
		}
		for k, v := range session {
			req.Header[k] = v
		}
		tr := &http.Transport{DisableCompression: true}
		defer tr.CloseIdleConnections()
		if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
			resp.Body.Close()
		}
	})
	have := capture(t, func(u string) {
		c := newTest(t, u, nil)
		if r, err := c.Post(context.Background(), mustRender(t, fixed, session), body); err == nil {
			readAll(t, r)
		}
	})
	if want == nil || string(have) != string(want) {
		t.Errorf("request bytes differ:\nhttpwire: %q\nnet/http: %q", have, want)
	}
}

// TestRenderRefuses: headers net/http would refuse, or that ask for
// behaviour this client does not have, are not rendered.
func TestRenderRefuses(t *testing.T) {
	t.Parallel()
	for _, h := range []http.Header{
		{"Bad Name": {"x"}},
		{"X-Ok": {"bad\x00value"}},
		{"Connection": {"close"}},
		{"Host": {"elsewhere"}},
		{"User-Agent": {"me"}},
		{"Transfer-Encoding": {"chunked"}},
		{"Expect": {"100-continue"}},
	} {
		if _, ok := Render(h); ok {
			t.Errorf("Render(%v) accepted", h)
		}
	}
	if _, ok := Render(http.Header{"X-Fine": {"v"}}); !ok {
		t.Error("Render refused a plain header")
	}
}

// TestPostKeepAlive: connections are reused across requests (one dial
// for sequential requests), a connection whose body was not read to the
// end is not, and one the server closed while idle is noticed before a
// request is sent on it.
// countingServer answers every request with answer and counts the
// connections it accepts.
func countingServer(t *testing.T, answer string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	conns := new(atomic.Int32)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, answer)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, conns
}

func TestPostKeepAlive(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, strings.Repeat("x", 100))
	c := newTest(t, srv.URL, nil)
	for range 5 {
		r, err := c.Post(context.Background(), Header{}, []byte("a"))
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, r)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 sequential requests, want 1", n)
	}
	// A body closed before its end: the connection is dropped.
	r, err := c.Post(context.Background(), Header{}, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Read(make([]byte, 10))
	r.Body.Close()
	r, err = c.Post(context.Background(), Header{}, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, r)
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections after an unfinished body, want 2", n)
	}
	// The server closes its idle connections: the next request dials.
	srv.CloseClientConnections()
	waitIdleClosed(t, c)
	r, err = c.Post(context.Background(), Header{}, []byte("a"))
	if err != nil {
		t.Fatalf("after the server closed the idle connection: %v", err)
	}
	readAll(t, r)
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections after the server closed the idle one, want 3", n)
	}
}

// TestPostContexts: a connection watches the context of its exchanges
// once for as long as they share it, and PostBy's deadline is gone from
// it once pooled: the end of a context it no longer serves leaves it
// alone; the end of the one it last served, while idle, retires it.
func TestPostContexts(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, "ok")
	c := newTest(t, srv.URL, nil)
	post := func(ctx context.Context, by time.Time) {
		t.Helper()
		r, err := c.PostBy(ctx, by, Header{}, []byte("a"))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r); got != "ok" {
			t.Fatalf("body %q", got)
		}
	}
	pooled := func() *conn {
		t.Helper()
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.idle) != 1 {
			t.Fatalf("%d pooled connections, want 1", len(c.idle))
		}
		return c.idle[0]
	}
	a, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	b, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	post(a, time.Now().Add(time.Minute))
	post(a, time.Now().Add(time.Minute))
	if cn := pooled(); !cn.deadline.IsZero() || cn.watched != a.Done() {
		t.Fatalf("pooled: deadline %v, watching a: %v", cn.deadline, cn.watched == a.Done())
	}
	post(b, time.Time{})
	cancelA() // the connection serves b now
	post(b, time.Time{})
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for exchanges of a then b, want 1", n)
	}
	cancelB() // the pooled connection is retired
	post(context.Background(), time.Time{})
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections after b, which the pooled one served, ended; want 2", n)
	}
	if cn := pooled(); cn.watched != nil || cn.stopWatch != nil {
		t.Fatal("a connection serving a context that never ends watches it")
	}
}

// waitIdleClosed waits until the pooled connection sees the server's
// close (it arrives asynchronously over loopback): polled on the
// connection's own state, not slept for.
func waitIdleClosed(t *testing.T, c *Client) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		closed := len(c.idle) == 1 && !c.idle[0].alive()
		c.mu.Unlock()
		if closed {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the idle connection never saw the server's close")
}

// TestPostErrors: a refused connection, a server that closes before
// answering or mid-body, a head slower than the deadline, and a
// canceled context each give the error net/http's client gives in
// kind (url.Error before the response; the context's error when it
// ended).
func TestPostErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	release := make(chan struct{})
	slowHead := rawServer(t, func(c net.Conn, _ *http.Request) bool {
		<-release
		return false
	})
	t.Cleanup(func() { close(release) }) // before the server's cleanup waits for its handlers
	closeEarly := rawServer(t, func(c net.Conn, _ *http.Request) bool { return false })
	cutBody := rawServer(t, func(c net.Conn, _ *http.Request) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		return false
	})
	stall := make(chan struct{})
	stalledBody := rawServer(t, func(c net.Conn, _ *http.Request) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		<-stall
		return false
	})
	t.Cleanup(func() { close(stall) })
	for _, tc := range []struct {
		name     string
		url      string
		ctx      func() (context.Context, context.CancelFunc)
		postErr  func(error) bool
		bodyErr  func(error) bool
		wantBody bool
		// cancelMidBody cancels the context once the first body bytes
		// are read, while the server holds the rest back.
		cancelMidBody bool
		// by is PostBy's deadline, from now (0: Post).
		by time.Duration
	}{
		{name: "refused", url: refused, postErr: func(err error) bool {
			var ue *url.Error
			return errors.As(err, &ue) && ue.Op == "Post" && strings.Contains(err.Error(), "connection refused")
		}},
		{name: "closed before answering", url: closeEarly, postErr: func(err error) bool {
			return errors.Is(err, io.ErrUnexpectedEOF)
		}},
		{name: "slow head past the deadline", url: slowHead,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			},
			postErr: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{name: "slow head past PostBy's deadline", url: slowHead, by: 50 * time.Millisecond,
			postErr: func(err error) bool {
				var ue *url.Error
				return errors.As(err, &ue) && ue.Err == context.DeadlineExceeded
			}},
		{name: "stalled body past PostBy's deadline", url: stalledBody, wantBody: true, by: 50 * time.Millisecond,
			bodyErr: func(err error) bool { return err == context.DeadlineExceeded }},
		{name: "cut mid-body", url: cutBody, wantBody: true, bodyErr: func(err error) bool {
			return errors.Is(err, io.ErrUnexpectedEOF)
		}},
		{name: "canceled mid-body", url: stalledBody, wantBody: true, cancelMidBody: true,
			bodyErr: func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			if tc.cancelMidBody {
				ctx, cancel = context.WithCancel(ctx)
			}
			defer cancel()
			c := newTest(t, tc.url, nil)
			var by time.Time
			if tc.by > 0 {
				by = time.Now().Add(tc.by)
			}
			r, err := c.PostBy(ctx, by, Header{}, []byte("{}"))
			if !tc.wantBody {
				if err == nil || !tc.postErr(err) {
					t.Fatalf("Post error %v: not the expected kind", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.cancelMidBody {
				if _, err := io.ReadFull(r.Body, make([]byte, 5)); err != nil {
					t.Fatalf("first bytes: %v", err)
				}
				cancel()
			}
			_, err = io.ReadAll(r.Body)
			r.Body.Close()
			if err == nil || !tc.bodyErr(err) {
				t.Fatalf("body error %v: not the expected kind", err)
			}
		})
	}
}

// TestPostTLS: https with a TLS httptest server (ALPN http/1.1), the
// connection reused.
func TestPostTLS(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			http.Error(w, "want HTTP/1.1", 400)
			return
		}
		io.WriteString(w, "secure")
	}))
	srv.EnableHTTP2 = true // the client must still get HTTP/1.1
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := newTest(t, srv.URL+"/v1/completions", srv.Client().Transport.(*http.Transport).TLSClientConfig)
	for range 3 {
		r, err := c.Post(context.Background(), Header{}, []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r); r.StatusCode != 200 || got != "secure" {
			t.Fatalf("status %d body %q", r.StatusCode, got)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d TLS connections for 3 requests, want 1", n)
	}
}

// TestUsable: a proxy from the environment, or another scheme, sends the
// caller back to net/http. (Loopback hosts are never proxied.)
func TestUsable(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:9")
	t.Setenv("HTTPS_PROXY", "")
	t.Setenv("NO_PROXY", "10.0.0.2")
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://10.0.0.1:8000/v1/chat/completions", false}, // proxied
		{"http://10.0.0.2:8000/v1/chat/completions", true},  // NO_PROXY
		{"http://127.0.0.1:8000/v1/chat/completions", true}, // loopback
		{"https://10.0.0.1/v1/completions", true},           // no HTTPS_PROXY
		{"http://user:pw@10.0.0.2/v1", false},
		{"unix:///tmp/sock", false},
		{"http://bücher.example/v1", false},
	} {
		if err := Usable(tc.url); (err == nil) != tc.ok {
			t.Errorf("Usable(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

// rawServer serves each request read from a connection with handle,
// which writes whatever it likes; it returns whether to keep reading
// requests on the connection. It returns the server's URL.
func rawServer(t testing.TB, handle func(c net.Conn, r *http.Request) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					if !handle(c, r) {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}
