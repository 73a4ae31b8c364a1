package httpwire

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
)

// post is the request ReadResponse is told the response answers (only
// its method matters: a HEAD answer has no body).
var post = &http.Request{Method: http.MethodPost}

// readResponse reads the response head with net/http's own parser
// (status line, header, body framing: chunked, Content-Length or up to
// the close), skipping 1xx informational responses (other than 101) as
// net/http does, at most 5.
func (cn *conn) readResponse(ctx context.Context, c *Client, stop func() bool) (*Response, error) {
	for range 6 { // net/http allows 5 informational responses
		resp, err := http.ReadResponse(cn.br, post)
		if err != nil {
			if errors.Is(err, io.EOF) {
				// The server closed the connection before answering.
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		// A 101 is returned like net/http returns it, but its connection
		// is not reused.
		keep := !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols
		b := &body{rc: resp.Body, cn: cn, c: c, ctx: ctx, stop: stop, keep: keep}
		return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: b, Received: cn.received}, nil
	}
	return nil, errors.New("net/http: too many 1xx informational responses")
}

// body is a response body; it returns its connection to the pool when it
// was read to the end and closed.
type body struct {
	rc     io.ReadCloser
	cn     *conn
	c      *Client
	ctx    context.Context
	stop   func() bool
	keep   bool // the response allows reusing the connection
	eof    bool
	closed bool
}

// errClosed is a read after Close.
var errClosed = errors.New("httpwire: read on closed response body")

func (b *body) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errClosed
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil && b.ctx.Err() != nil:
		// The context ended and closed the connection under the read.
		err = context.Cause(b.ctx)
	case err != nil && b.cn.expired():
		err = context.DeadlineExceeded
	}
	return n, err
}

// Close puts the connection back in the pool when the body was read to
// its end (and the context did not end meanwhile), and closes it
// otherwise.
func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.stop() && b.eof && b.keep {
		b.c.put(b.cn)
		return nil
	}
	b.cn.close()
	return nil
}

// rawChecker is a connection whose readability can be checked without
// blocking.
type rawChecker interface {
	// idle is true when the connection is open and has nothing to read.
	idle() bool
}

// rawSender writes a request on a TCP connection and waits for its
// answer to start arriving without a read that finds nothing.
type rawSender interface {
	// sendWait writes b and waits until the connection is readable;
	// done is false when only b[:n] was written (the rest is the
	// caller's to write) or on an error.
	sendWait(b []byte) (n int, done bool, err error)
}

// sysConn is what *net.TCPConn (also under a *tls.Conn) provides.
type sysConn interface {
	SyscallConn() (syscall.RawConn, error)
}

// netConner is a *tls.Conn.
type netConner interface {
	NetConn() net.Conn
}
