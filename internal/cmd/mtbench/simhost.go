package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mtkit/mtkit/internal/rxstamp"
	"github.com/mtkit/mtkit/internal/sim"
)

// simHost serves a simulator on a loopback port from this process. With
// tap set, it keeps, for every completion request, the time the request
// reached the handler and the "sim_sent_ns" stamp of every token-bearing
// chunk, keyed by the X-Session-ID header.
type simHost struct {
	URL    string
	Server *sim.Server
	hs     *http.Server
	done   chan struct{}
	tap    *tap
}

// startSim serves cfg on 127.0.0.1; withTap keeps per-request stamps.
func startSim(cfg sim.Config, withTap bool) (*simHost, error) {
	s, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &simHost{URL: "http://" + ln.Addr().String(), Server: s, done: make(chan struct{})}
	var handler http.Handler = s
	h.hs = &http.Server{ReadHeaderTimeout: 30 * time.Second}
	if withTap {
		h.tap = &tap{next: s, reqs: map[string][]*served{}}
		handler = h.tap
		// Requests are stamped with when they reached the server's
		// socket too, which splits a request's transit into mtrun's
		// side and the server's wake-up.
		ln = stampListener{ln}
		h.hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			if sc, ok := c.(*rxstamp.Conn); ok {
				ctx = context.WithValue(ctx, connKey{}, sc.R)
			}
			return ctx
		}
	}
	h.hs.Handler = handler
	go func() {
		defer close(h.done)
		_ = h.hs.Serve(ln)
	}()
	return h, nil
}

// close stops the server, cutting streams still open after a grace period.
func (h *simHost) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.hs.Shutdown(ctx); err != nil {
		_ = h.hs.Close()
	}
	<-h.done
}

// stampListener reads each TCP connection it accepts with the kernel's
// receive stamps (rxstamp), where the system has them.
type stampListener struct{ net.Listener }

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if r := rxstamp.New(c); r != nil {
		return &rxstamp.Conn{Conn: c, R: r}, nil
	}
	return c, nil
}

// connKey is the context key of a tapped request's rxstamp.Reader.
type connKey struct{}

// served is what the server did for one request, in Unix nanoseconds of
// the server's clock.
type served struct {
	// arrived is when the whole request reached the server's socket:
	// the kernel's receive stamp of the read that brought its last byte
	// (0: not known), before the server was scheduled to read it. A
	// request whose body the handler did not read to its end keeps the
	// stamp of its head.
	arrived int64
	recv    int64   // request handed to the handler (headers read)
	stamps  []int64 // sim_sent_ns of each token-bearing chunk, in order
	// flushed is when the Flush after each token-bearing chunk returned:
	// the chunk had been handed to the kernel (loopback delivers it within
	// the write), so a chunk read after its stamp but before this time was
	// held up on the server's side.
	flushed []int64
	bad     int  // token chunks whose stamp could not be parsed
	pending bool // a token chunk was written and not yet flushed
}

// tap records the send stamps of a simulator's streams.
type tap struct {
	next http.Handler
	mu   sync.Mutex
	reqs map[string][]*served // by X-Session-ID, in arrival order
}

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	recv := time.Now().UnixNano()
	if r.Method != http.MethodPost {
		t.next.ServeHTTP(w, r)
		return
	}
	sv := &served{recv: recv, stamps: make([]int64, 0, 64), flushed: make([]int64, 0, 64)}
	if rx, ok := r.Context().Value(connKey{}).(*rxstamp.Reader); ok {
		sv.arrived = rx.Received().UnixNano()
		r.Body = &arrivalBody{ReadCloser: r.Body, rx: rx, sv: sv}
	}
	t.next.ServeHTTP(&tapWriter{ResponseWriter: w, sv: sv}, r)
	id := r.Header.Get("X-Session-ID")
	t.mu.Lock()
	t.reqs[id] = append(t.reqs[id], sv)
	t.mu.Unlock()
}

// arrivalBody is a tapped request's body: when the handler has read it
// to its end, the request was whole, and served.arrived becomes the
// kernel's receive stamp of the read that brought its last byte (the
// same as the head's when head and body came in one read).
type arrivalBody struct {
	io.ReadCloser
	rx *rxstamp.Reader
	sv *served
}

func (b *arrivalBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.sv.arrived = b.rx.Received().UnixNano()
	}
	return n, err
}

// take returns and forgets the requests seen so far.
func (t *tap) take() map[string][]*served {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.reqs
	t.reqs = map[string][]*served{}
	return m
}

// tapWriter looks at each chunk the simulator writes. The simulator
// writes every SSE event with one Write, so one Write is one chunk.
type tapWriter struct {
	http.ResponseWriter
	sv *served
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// FlushError flushes the real writer (http.ResponseController prefers it
// to Unwrap) and notes when a token chunk's flush returned.
func (w *tapWriter) FlushError() error {
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if w.sv.pending {
		w.sv.flushed = append(w.sv.flushed, time.Now().UnixNano())
		w.sv.pending = false
	}
	return err
}

func (w *tapWriter) Write(b []byte) (int, error) {
	if ns, ok, err := tokenStamp(b); ok {
		if err != nil {
			w.sv.bad++
		} else {
			w.sv.stamps = append(w.sv.stamps, ns)
			w.sv.pending = true
		}
	}
	return w.ResponseWriter.Write(b)
}

var (
	stampKey  = []byte(`"sim_sent_ns":`)
	roleDelta = []byte(`"delta":{"role"`)
	noChoices = []byte(`"choices":[]`)
)

// tokenStamp classifies one SSE event written by the simulator: ok is
// true for a chunk that carries a token (not the role chunk, the usage
// chunk or [DONE]), and ns is its "sim_sent_ns" stamp.
func tokenStamp(ev []byte) (ns int64, ok bool, err error) {
	i := bytes.LastIndex(ev, stampKey)
	if i < 0 || !bytes.HasPrefix(ev, []byte("data:")) || bytes.Contains(ev, roleDelta) || bytes.Contains(ev, noChoices) {
		return 0, false, nil
	}
	rest := ev[i+len(stampKey):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 {
		return 0, true, errors.New("sim_sent_ns: no digits")
	}
	ns, err = strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("sim_sent_ns: %w", err)
	}
	return ns, true, nil
}
