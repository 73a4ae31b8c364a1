package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
)

// debugFlag returns the hidden --debug-addr flag (a new one per app: cli
// writes into its flags): mtrun serves its goroutine count and memory on a
// loopback port while it runs, for scripts/soak.sh to sample. Nothing it
// serves carries the command line (no secrets).
func debugFlag() cli.Flag {
	return &cli.StringFlag{
		Name:   "debug-addr",
		Hidden: true,
		Usage:  "serve /debug/stats (goroutines, memory) and goroutine/heap profiles on loopback `HOST:PORT`",
		Action: func(c *cli.Context, addr string) error { return serveDebug(c.Context, addr, c.App.ErrWriter) },
	}
}

// debugStats is the JSON of GET /debug/stats.
type debugStats struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heap_alloc_bytes"`
	HeapSys    uint64 `json:"heap_sys_bytes"`
	Sys        uint64 `json:"sys_bytes"` // memory obtained from the OS by the Go runtime
	NumGC      uint32 `json:"num_gc"`
}

// serveDebug listens on addr, which must be a loopback address, and serves
// the debug endpoints until ctx is done. It names the URL on errw.
func serveDebug(ctx context.Context, addr string, errw io.Writer) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return command.Usagef("--debug-addr %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return command.Usagef("--debug-addr %q: loopback addresses only (e.g. 127.0.0.1:6060)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/stats", func(w http.ResponseWriter, _ *http.Request) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(debugStats{runtime.NumGoroutine(), m.HeapAlloc, m.HeapSys, m.Sys, m.NumGC})
	})
	for _, p := range []string{"goroutine", "heap"} {
		mux.Handle("GET /debug/pprof/"+p, pprofHandler(p))
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	fmt.Fprintf(errw, "mtrun: debug endpoint at http://%s/debug/stats\n", ln.Addr())
	return nil
}

// pprofHandler writes the named runtime profile; ?debug=1 gives text.
func pprofHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		debug := 0
		if r.URL.Query().Get("debug") != "" {
			debug = 1
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		_ = pprof.Lookup(name).WriteTo(w, debug)
	})
}
