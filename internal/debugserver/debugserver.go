// Package debugserver serves a running tool's goroutine count, memory and
// goroutine/heap profiles on a loopback port (mtrun --debug-addr), for
// scripts/soak.sh to sample. Nothing it serves carries the command line,
// which may hold secrets.
package debugserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"time"
)

// Stats is the JSON of GET /debug/stats.
type Stats struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heap_alloc_bytes"`
	HeapSys    uint64 `json:"heap_sys_bytes"`
	Sys        uint64 `json:"sys_bytes"` // memory obtained from the OS by the Go runtime
	NumGC      uint32 `json:"num_gc"`
}

// ErrAddress is wrapped by Serve's errors about the address itself (not
// host:port, not loopback), as opposed to a failure to listen on it.
var ErrAddress = errors.New("bad address")

// Server is a running debug server.
type Server struct {
	// URL is the address of /debug/stats.
	URL  string
	done chan struct{}
}

// Done is closed once the server has stopped (its context is done).
func (s *Server) Done() <-chan struct{} { return s.done }

// Serve listens on addr, which must be a loopback address (host:port;
// port 0 picks one), and serves the debug endpoints until ctx is done.
func Serve(ctx context.Context, addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAddress, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: loopback addresses only (e.g. 127.0.0.1:6060)", ErrAddress)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/stats", func(w http.ResponseWriter, _ *http.Request) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Stats{runtime.NumGoroutine(), m.HeapAlloc, m.HeapSys, m.Sys, m.NumGC})
	})
	for _, p := range []string{"goroutine", "heap"} {
		mux.Handle("GET /debug/pprof/"+p, profile(p))
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s := &Server{URL: fmt.Sprintf("http://%s/debug/stats", ln.Addr()), done: make(chan struct{})}
	go func() {
		_ = srv.Serve(ln)
		close(s.done)
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return s, nil
}

// profile writes the named runtime profile; ?debug=1 gives text.
func profile(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		debug := 0
		if r.URL.Query().Get("debug") != "" {
			debug = 1
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		_ = pprof.Lookup(name).WriteTo(w, debug)
	})
}
