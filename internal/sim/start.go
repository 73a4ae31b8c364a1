package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// shutdownGrace is how long Close lets in-flight responses finish before
// it cuts their connections.
const shutdownGrace = 2 * time.Second

// Running is a Server listening on a TCP address.
type Running struct {
	// URL is the base URL, "http://HOST:PORT" (append /v1/...).
	URL string
	// Server is the handler, for Stats (with Replicas > 1, the first
	// replica).
	Server *Server
	// Router is the router in front of the replicas when Replicas > 1.
	Router *Router

	hs        *http.Server
	done      chan struct{}
	serveErr  error
	closeOnce sync.Once
	closeErr  error
}

// Start serves a new Server for cfg on cfg.Addr (default 127.0.0.1:0, a
// free loopback port) until ctx is done or Close is called.
func Start(ctx context.Context, cfg Config) (*Running, error) {
	var (
		s       *Server
		router  *Router
		handler http.Handler
		err     error
	)
	if cfg.Replicas > 1 {
		router, err = NewRouter(cfg, cfg.Replicas, cfg.AffinityBreak)
		if err != nil {
			return nil, err
		}
		s, handler = router.replicas[0], router
	} else {
		if s, err = New(cfg); err != nil {
			return nil, err
		}
		handler = s
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sim: listen %s: %w", s.cfg.Addr, err)
	}
	r := &Running{
		URL:    "http://" + ln.Addr().String(),
		Server: s,
		Router: router,
		hs:     &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second},
		done:   make(chan struct{}),
	}
	go func() {
		defer close(r.done)
		if err := r.hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			r.serveErr = err
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = r.Close()
		case <-r.done:
		}
	}()
	return r, nil
}

// Done is closed when the server has stopped.
func (r *Running) Done() <-chan struct{} { return r.done }

// Close stops the server: it stops accepting, gives in-flight responses
// a short grace period, then closes every connection. It is safe to call
// more than once.
func (r *Running) Close() error {
	r.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := r.hs.Shutdown(ctx); err != nil {
			_ = r.hs.Close()
		}
		<-r.done
		r.closeErr = r.serveErr
	})
	return r.closeErr
}
