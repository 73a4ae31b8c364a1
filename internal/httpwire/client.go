// Package httpwire is a lean HTTP/1.1 client for one kind of call: POST a
// body that is already in memory and read the (usually streamed) answer,
// on keep-alive connections, all on the caller's goroutine.
//
// net/http's Transport runs a read and a write goroutine per connection
// and hands every request and response between them and the caller; for a
// benchmark client that sends thousands of short streamed requests a
// second that hand-off is most of the client's CPU (see
// BenchmarkPostStream). This client writes the request with one system
// call and, on plain TCP, waits for the poller to report the answer
// instead of first trying a read that would find nothing (sendWait),
// parses the head with net/textproto and decodes chunked bodies with
// net/http/httputil's reader (the same code net/http uses), and checks a
// pooled connection is still open with one non-blocking peek instead of a
// goroutine parked on it.
//
// It does no proxies, no HTTP/2, no redirects, no compression and no
// cookies: callers use net/http for anything else (Usable tells).
package httpwire

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http/httpproxy"

	"github.com/mtkit/mtkit/internal/rxstamp"
)

// Client posts to one server. Its methods are safe for concurrent use.
type Client struct {
	addr    string // host:port to dial
	host    string // Host header
	uri     string // request target
	url     string // full URL, for errors
	tls     *tls.Config
	dialer  net.Dialer
	maxIdle int
	idleFor time.Duration
	// dialFn, when set (Config.Dial), replaces dialer.DialContext.
	dialFn func(ctx context.Context, network, addr string) (net.Conn, error)

	mu   sync.Mutex
	idle []*conn // most recently used last
}

// Config sets up a Client.
type Config struct {
	// URL is the full URL requests are posted to (http or https).
	URL string
	// TLS is the TLS configuration for https (nil: defaults); ServerName
	// and NextProtos (http/1.1) are set when empty.
	TLS *tls.Config
	// MaxIdle is how many idle connections are kept (default 2).
	MaxIdle int
	// IdleTimeout closes connections idle longer (default 90 s).
	IdleTimeout time.Duration
	// DialTimeout and KeepAlive are the net.Dialer's (defaults 30 s, 30 s).
	DialTimeout, KeepAlive time.Duration
	// Dial, when set, opens the connections instead of a net.Dialer (an
	// in-memory network in tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Usable reports why rawURL cannot be served by this client (nil: it
// can): another scheme, a non-ASCII host, user info, or a proxy from the
// environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) that applies to it.
func Usable(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q", u.Scheme)
	}
	if u.User != nil || u.Opaque != "" || u.Host == "" {
		return errors.New("URL with user info, no host or opaque")
	}
	for i := 0; i < len(u.Host); i++ {
		if u.Host[i] >= 0x80 {
			return errors.New("non-ASCII host")
		}
	}
	if !httpguts.ValidHostHeader(u.Host) {
		return errors.New("invalid host")
	}
	// The environment as it is now (net/http's ProxyFromEnvironment
	// reads it once per process).
	p, err := httpproxy.FromEnvironment().ProxyFunc()(u)
	if err != nil {
		return err
	}
	if p != nil {
		return errors.New("a proxy applies")
	}
	return nil
}

// New returns a client for cfg.URL; the URL must pass Usable.
func New(cfg Config) (*Client, error) {
	if err := Usable(cfg.URL); err != nil {
		return nil, fmt.Errorf("httpwire: %s: %w", cfg.URL, err)
	}
	u, _ := url.Parse(cfg.URL)
	host := strings.TrimSuffix(u.Host, ":")
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	c := &Client{
		addr:    net.JoinHostPort(u.Hostname(), port),
		host:    host,
		uri:     u.RequestURI(),
		url:     cfg.URL,
		maxIdle: cfg.MaxIdle,
		idleFor: cfg.IdleTimeout,
		dialer:  net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: cfg.KeepAlive},
		dialFn:  cfg.Dial,
	}
	if c.maxIdle <= 0 {
		c.maxIdle = 2
	}
	if c.idleFor <= 0 {
		c.idleFor = 90 * time.Second
	}
	if c.dialer.Timeout <= 0 {
		c.dialer.Timeout = 30 * time.Second
	}
	if c.dialer.KeepAlive == 0 {
		c.dialer.KeepAlive = 30 * time.Second
	}
	if u.Scheme == "https" {
		t := &tls.Config{}
		if cfg.TLS != nil {
			t = cfg.TLS.Clone()
		}
		if t.ServerName == "" {
			t.ServerName = u.Hostname()
		}
		if len(t.NextProtos) == 0 {
			t.NextProtos = []string{"http/1.1"}
		}
		c.tls = t
	}
	return c, nil
}

// Header is a request's header block: the lines between the request line
// and the body, as net/http writes them (see Render).
type Header struct {
	b []byte
}

// reserved are the header fields this client writes itself or whose
// meaning it does not implement; a header holding one is refused by
// Render (use net/http for such requests).
var reserved = map[string]bool{
	"Host": true, "User-Agent": true, "Content-Length": true, "Transfer-Encoding": true,
	"Trailer": true, "Connection": true, "Expect": true, "Upgrade": true, "Te": true,
	"Keep-Alive": true, "Proxy-Connection": true,
}

// Render is the header block net/http's Request.write gives for h on a
// request with a body (Host, User-Agent and Content-Length come first and
// are written by Post): the fields sorted by name, each value with
// leading and trailing blanks trimmed. ok is false when a field name
// or value is invalid or reserved (net/http would refuse it, or the
// field asks for something this client does not do).
func Render(hs ...http.Header) (Header, bool) {
	type kv struct {
		k  string
		vs []string
	}
	var all []kv
	seen := map[string]int{}
	for _, h := range hs {
		for k, vs := range h {
			if i, ok := seen[k]; ok {
				all[i].vs = vs // later headers replace earlier ones, as req.Header[k] = v
				continue
			}
			seen[k] = len(all)
			all = append(all, kv{k, vs})
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	var b []byte
	for _, f := range all {
		if !httpguts.ValidHeaderFieldName(f.k) || reserved[http.CanonicalHeaderKey(f.k)] {
			return Header{}, false
		}
		for _, v := range f.vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return Header{}, false
			}
			v = textproto.TrimString(v) // valid values hold no newlines to replace
			b = append(b, f.k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	return Header{b: b}, true
}

// Response is a response whose body is read from the connection.
type Response struct {
	StatusCode int
	Header     http.Header
	// Body must be closed; a body read to its end puts the connection
	// back in the pool.
	Body io.ReadCloser
	// Received tells, while Body is read, when the bytes read last from
	// the connection arrived: the kernel's receive stamp of the last
	// segment read (SO_TIMESTAMPNS, on Linux over plain TCP; the read's
	// return when the kernel gave none), else the current time. A reader
	// that stamps what it parses with it gets when the bytes reached the
	// machine, not when this process got to read them: never later than
	// the current time, never earlier than the arrival of the last byte
	// parsed.
	Received func() time.Time
}

// Post sends body to the client's URL with the header block h and returns
// the response once its head is read. The context bounds the whole
// exchange, body included: when it ends the connection is closed under
// any read or write, which then returns the context's error. Errors
// before the response are *url.Error, as net/http's Client.Do gives.
func (c *Client) Post(ctx context.Context, h Header, body []byte) (*Response, error) {
	return c.PostBy(ctx, time.Time{}, h, body)
}

// PostBy is Post with a deadline for the whole exchange (zero: none),
// as if ctx had it: past it, reads and writes fail with
// context.DeadlineExceeded. It costs no context, timer or allocation
// per request (the connection's own deadline is set), where a context
// made with a deadline for each request costs all three.
func (c *Client) PostBy(ctx context.Context, deadline time.Time, h Header, body []byte) (*Response, error) {
	resp, err := c.post(ctx, deadline, h, body)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		} else if expired(deadline) {
			err = context.DeadlineExceeded
		}
		return nil, &url.Error{Op: "Post", URL: c.url, Err: err}
	}
	return resp, nil
}

// expired reports whether deadline is set and has passed.
func expired(deadline time.Time) bool {
	return !deadline.IsZero() && !time.Now().Before(deadline)
}

func (c *Client) post(ctx context.Context, deadline time.Time, h Header, body []byte) (*Response, error) {
	for {
		cn, err := c.get(ctx, deadline)
		if err != nil {
			return nil, err
		}
		if !cn.watch(ctx, deadline) {
			// A context this connection served before ended: it is (or
			// is being) closed under.
			cn.close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		head := cn.head[:0]
		head = append(head, "POST "...)
		head = append(head, c.uri...)
		head = append(head, " HTTP/1.1\r\nHost: "...)
		head = append(head, c.host...)
		head = append(head, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: "...)
		head = strconv.AppendInt(head, int64(len(body)), 10)
		head = append(head, "\r\n"...)
		head = append(head, h.b...)
		head = append(head, "\r\n"...)
		var n int64
		if len(head)+len(body) <= maxCopy {
			head = append(head, body...)
			n, err = cn.write(head)
		} else {
			bufs := net.Buffers{head, body}
			n, err = bufs.WriteTo(cn.nc)
		}
		cn.head = head[:0]
		if err != nil {
			cn.close()
			if n == 0 && cn.reused && ctx.Err() == nil && !expired(deadline) {
				// Nothing reached a connection the server had closed:
				// safe to send again on a new one (net/http does too).
				continue
			}
			return nil, err
		}
		resp, err := cn.readResponse(ctx, c, cn.keptFn)
		if err != nil {
			cn.close()
			return nil, err
		}
		return resp, nil
	}
}

// CloseIdle closes the idle connections.
func (c *Client) CloseIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, cn := range idle {
		cn.close()
	}
}

// get returns a pooled connection that is still open, or a new one
// (dialled within the deadline, when set).
func (c *Client) get(ctx context.Context, deadline time.Time) (*conn, error) {
	now := time.Now()
	for {
		c.mu.Lock()
		n := len(c.idle)
		if n == 0 {
			c.mu.Unlock()
			break
		}
		cn := c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		if now.Sub(cn.idleSince) < c.idleFor && cn.alive() {
			cn.reused = true
			return cn, nil
		}
		cn.close()
	}
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	return c.dial(ctx)
}

// put returns a connection to the pool, or closes it when the pool is
// full or its context ended.
func (c *Client) put(cn *conn) {
	if !cn.clearDeadline() {
		cn.close()
		return
	}
	cn.idleSince = time.Now()
	c.mu.Lock()
	if len(c.idle) < c.maxIdle {
		c.idle = append(c.idle, cn)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	cn.close()
}

func (c *Client) dial(ctx context.Context) (*conn, error) {
	dial := c.dialer.DialContext
	if c.dialFn != nil {
		dial = c.dialFn
	}
	nc, err := dial(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		tc := tls.Client(nc, c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
			nc.Close()
			return nil, fmt.Errorf("server chose protocol %q", p)
		}
		nc = tc
	}
	cn := &conn{nc: nc, head: make([]byte, 0, 4<<10)}
	cn.keptFn = cn.kept
	cn.raw, cn.send, _ = rawConn(nc)
	var r io.Reader = nc
	cn.received = time.Now
	if cn.send != nil { // plain TCP
		if sr := rxstamp.New(nc); sr != nil {
			r, cn.received = sr, sr.Received
		}
	}
	cn.br = bufio.NewReaderSize(r, 32<<10)
	return cn, nil
}

// conn is one connection and its read buffer.
type conn struct {
	nc        net.Conn
	raw       rawChecker // the TCP connection under nc, for alive (nil: none)
	send      rawSender  // nc itself, for write (nil: none, or TLS)
	br        *bufio.Reader
	received  func() time.Time // Response.Received
	head      []byte           // request head (and a small body), reused
	idleSince time.Time
	reused    bool

	// The context whose end closes the connection under its exchange:
	// watched is its Done channel, registered (context.AfterFunc) once
	// for as long as the connection serves exchanges of that context.
	watched   <-chan struct{}
	stopWatch func() bool
	aborted   atomic.Bool // the watched context ended: abort ran
	deadline  time.Time   // of the current exchange (zero: none)
	keptFn    func() bool // kept, made once
}

// maxCopy is the largest request (head and body) copied into the
// connection's buffer to go out in one write; a larger one is written
// from the two buffers (writev).
const maxCopy = 64 << 10

// aLongTimeAgo is a deadline in the past: it makes blocked reads and
// writes on a connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// write writes b, the whole request, and when it could, waits until
// the answer starts to arrive (see sendWait); n is how much was written.
func (cn *conn) write(b []byte) (int64, error) {
	if cn.send == nil {
		n, err := cn.nc.Write(b)
		return int64(n), err
	}
	n, done, err := cn.send.sendWait(b)
	if done || err != nil {
		return int64(n), err
	}
	m, err := cn.nc.Write(b[n:])
	return int64(n + m), err
}

// abort unblocks the connection's reads and writes (context ended) and
// marks the connection unfit for another exchange.
func (cn *conn) abort() {
	cn.aborted.Store(true)
	cn.nc.SetDeadline(aLongTimeAgo)
}

// watch readies the connection for an exchange bounded by ctx and
// deadline; false when a context it served before has ended (the
// connection must be closed). The registration on ctx is kept across
// exchanges of the same context.
func (cn *conn) watch(ctx context.Context, deadline time.Time) bool {
	if done := ctx.Done(); done != cn.watched {
		if cn.stopWatch != nil && !cn.stopWatch() {
			return false // abort ran, or is running
		}
		cn.watched, cn.stopWatch = done, nil
		if done != nil {
			cn.stopWatch = context.AfterFunc(ctx, cn.abort)
		}
	}
	if cn.aborted.Load() {
		return false
	}
	if deadline.IsZero() && cn.deadline.IsZero() {
		return true
	}
	cn.deadline = deadline
	cn.nc.SetDeadline(deadline)
	// An abort that came between the check above and this deadline
	// may have been overwritten by it: renew it.
	if cn.aborted.Load() {
		cn.nc.SetDeadline(aLongTimeAgo)
	}
	return true
}

// kept reports, at the end of an exchange, whether the connection may
// serve another: its context did not end under it.
func (cn *conn) kept() bool { return !cn.aborted.Load() }

// expired reports whether the current exchange's deadline has passed.
func (cn *conn) expired() bool { return expired(cn.deadline) }

// clearDeadline removes the exchange's deadline from an idle connection;
// false when its context ended meanwhile.
func (cn *conn) clearDeadline() bool {
	if !cn.deadline.IsZero() {
		cn.deadline = time.Time{}
		cn.nc.SetDeadline(time.Time{})
	}
	return !cn.aborted.Load()
}

func (cn *conn) close() {
	if cn.stopWatch != nil {
		cn.stopWatch()
		cn.stopWatch = nil
	}
	cn.nc.Close()
}

// alive reports whether an idle connection is still open: nothing to
// read (the server sent neither an answer nor a close), checked without
// blocking.
func (cn *conn) alive() bool {
	if cn.br.Buffered() > 0 {
		return false
	}
	if cn.raw == nil {
		return true
	}
	return cn.raw.idle()
}
