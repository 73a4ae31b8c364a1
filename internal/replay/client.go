package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mtkit/mtkit/internal/httpwire"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay/openai"
)

// client sends requests to one OpenAI-compatible server.
type client struct {
	http *http.Client
	// wire, when not nil, sends the completion requests (httpwire: no
	// transport goroutines); http does the rest and any request wire
	// cannot (a proxy, reserved or invalid headers).
	wire       *httpwire.Client
	wireHeader http.Header     // the fixed headers of every completion request
	wireHead   httpwire.Header // wireHeader rendered
	wireOK     bool            // wireHead can be sent
	base       string          // base URL ending in /v1
	apiKey     string
	headers    http.Header
	api        openai.API
	stream     bool
	// answered is set once any response head has come: the server is
	// alive (see runner.watchHung).
	answered atomic.Bool
}

func newClient(o *Options, concurrency int) *client {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        concurrency + 16,
		MaxIdleConnsPerHost: concurrency + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	if o.dial != nil {
		tr.DialContext = o.dial
	}
	c := &client{
		// No Client.Timeout: it would cut long streams; each request has
		// its own context deadline.
		http:    &http.Client{Transport: tr},
		base:    openai.BaseURL(o.URL),
		apiKey:  o.APIKey,
		headers: o.Headers,
		api:     o.API,
		stream:  o.Stream,
	}
	if httpwire.Usable(c.endpoint()) == nil {
		c.wire, _ = httpwire.New(httpwire.Config{
			URL: c.endpoint(), MaxIdle: concurrency + 16, IdleTimeout: 90 * time.Second,
			DialTimeout: 10 * time.Second, KeepAlive: 30 * time.Second, Dial: o.dial,
		})
		c.wireHeader = c.fixedHeader(true)
		c.wireHead, c.wireOK = httpwire.Render(c.wireHeader)
	}
	return c
}

func (c *client) close() {
	c.http.CloseIdleConnections()
	if c.wire != nil {
		c.wire.CloseIdle()
	}
}

// wireFor returns the header block of a completion request with the
// session's headers, and whether the wire client can send it.
func (c *client) wireFor(session http.Header) (httpwire.Header, bool) {
	if c.wire == nil || !c.wireOK {
		return httpwire.Header{}, false
	}
	if len(session) == 0 {
		return c.wireHead, true
	}
	return httpwire.Render(c.wireHeader, session)
}

// endpoint is the URL of the completion requests.
func (c *client) endpoint() string {
	return c.base + c.api.Path()
}

func (c *client) newRequest(ctx context.Context, method, url string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header = c.fixedHeader(body != nil)
	return req, nil
}

// fixedHeader returns the headers every request carries: --header's, the
// JSON content type when there is a body, and the API key.
func (c *client) fixedHeader(body bool) http.Header {
	h := http.Header{}
	for k, vs := range c.headers {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if body {
		h.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		h.Set("Authorization", "Bearer "+c.apiKey)
	}
	return h
}

// models lists the server's models, within timeout.
func (c *client) models(ctx context.Context, timeout time.Duration) ([]openai.ModelInfo, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := c.newRequest(ctx, http.MethodGet, c.base+"/models", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil && parent.Err() == nil {
			return nil, &hungError{base: c.base, what: "did not answer GET " + c.base + "/models", after: timeout}
		}
		return nil, fmt.Errorf("GET %s/models: %w", c.base, err)
	}
	c.answered.Store(true)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/models: HTTP %d: %s", c.base, resp.StatusCode, openai.ErrorMessage(body))
	}
	models, err := openai.Models(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s/models: %w", c.base, err)
	}
	return models, nil
}

// attempt is the outcome of one HTTP request.
type attempt struct {
	Start      time.Time
	Resp       *openai.Response
	Status     int
	Err        error
	Class      string
	RetryAfter time.Duration
	// Header is the response's header (nil when none came).
	Header http.Header
}

// do sends one request with its own timeout. The body is prepared
// beforehand; the clock starts right before the request is written.
//
// session holds the headers that name the request's session or keep its
// route (nil: none). hint is the request's max_tokens (0: none), how
// many chunks the answer may stream.
func (c *client) do(ctx context.Context, body []byte, session http.Header, timeout time.Duration, hint int) *attempt {
	a := &attempt{Resp: openai.NewResponse(hint)}
	deadline := time.Now().Add(timeout)
	head, useWire := c.wireFor(session)
	var req *http.Request
	if !useWire {
		// httpwire bounds the exchange by the deadline itself, without a
		// context per request.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
		var err error
		req, err = c.newRequest(ctx, http.MethodPost, c.endpoint(), body)
		if err != nil {
			a.Start = time.Now()
			a.Resp.End = a.Start
			a.Err, a.Class = err, record.ErrConnect
			return a
		}
		for k, v := range session {
			req.Header[k] = v
		}
	}
	a.Start = time.Now()
	var resp *httpwire.Response
	var err error
	if useWire {
		resp, err = c.wire.PostBy(ctx, deadline, head, body)
	} else {
		var hr *http.Response
		if hr, err = c.http.Do(req); err == nil {
			resp = &httpwire.Response{StatusCode: hr.StatusCode, Header: hr.Header, Body: hr.Body}
		}
	}
	if err != nil {
		a.Resp.End = time.Now()
		a.Err, a.Class = err, classify(ctx, deadline, err)
		return a
	}
	if !c.answered.Load() {
		c.answered.Store(true)
	}
	defer func() {
		// Drain a finished response so the connection is reused, but not
		// the rest of a broken stream: that would wait for the server.
		if !errors.Is(a.Err, openai.ErrStream) {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		}
		resp.Body.Close()
	}()
	a.Status = resp.StatusCode
	a.Header = resp.Header
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		a.Resp.End = time.Now()
		a.Err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, openai.ErrorMessage(b))
		a.Class = classifyStatus(resp.StatusCode, b)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			a.RetryAfter = retryAfter(resp.Header)
		}
		return a
	}
	if c.stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// Chunks are stamped with when their bytes reached the machine
		// (httpwire.Response.Received), not with this goroutine's
		// wake-up after them, where the connection tells.
		received := resp.Received
		if received == nil {
			received = time.Now
		}
		err = openai.ReadStream(resp.Body, a.Resp, received)
	} else {
		var b []byte
		b, err = io.ReadAll(resp.Body)
		now := time.Now()
		a.Resp.End = now
		if err == nil {
			err = a.Resp.Apply(bytes.TrimSpace(b), now, false)
			if err == nil {
				a.Resp.Extra = openai.TopLevelExtras(b, a.Resp.Extra)
			}
		}
	}
	if a.Resp.End.IsZero() {
		a.Resp.End = time.Now()
	}
	if err != nil {
		a.Err = err
		a.Class = classify(ctx, deadline, err)
		if errors.Is(err, openai.ErrStream) || a.Class == record.ErrConnect {
			// The headers came: a body cut short is a truncated stream.
			a.Class = record.ErrStream
		}
	}
	return a
}

// classify names the class of a request's error; past the request's
// deadline every error is a timeout (the deadline cut the exchange).
func classify(ctx context.Context, deadline time.Time, err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return record.ErrCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded),
		!time.Now().Before(deadline):
		return record.ErrTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return record.ErrTimeout
	}
	return record.ErrConnect
}

func classifyStatus(status int, body []byte) string {
	switch {
	case status == http.StatusTooManyRequests:
		return record.ErrRateLimit
	case status >= 500:
		return record.ErrHTTP5xx
	case status == http.StatusBadRequest && openai.IsContextLengthError(body):
		return record.ErrContext
	}
	return record.ErrHTTP4xx
}

// retryAfter reads the server's wait: Retry-After-Ms (milliseconds, as
// OpenAI sends), else Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return retryAfterValue(h.Get("Retry-After"))
}

// retryAfterValue parses a Retry-After value (seconds or an HTTP date).
func retryAfterValue(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// retryable reports whether a failed attempt may be retried.
func retryable(class string) bool {
	switch class {
	case record.ErrConnect, record.ErrTimeout, record.ErrRateLimit, record.ErrHTTP5xx, record.ErrStream:
		return true
	}
	return false
}
