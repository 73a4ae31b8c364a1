package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// TestDebugEndpoint: --debug-addr serves the goroutine count and memory on
// loopback, serves no command line (secrets), and stops with its context.
func TestDebugEndpoint(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errb clitest.Buffer
	if err := serveDebug(ctx, "127.0.0.1:0", &errb); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(errb.String())
	url, ok := strings.CutPrefix(line, "mtrun: debug endpoint at ")
	if !ok {
		t.Fatalf("stderr %q", line)
	}
	get := func(u string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, b := get(url)
	var st debugStats
	if err := json.Unmarshal(b, &st); code != 200 || err != nil || st.Goroutines < 2 || st.HeapAlloc == 0 || st.Sys == 0 {
		t.Fatalf("GET %s: %d %s (%v)", url, code, b, err)
	}
	base := strings.TrimSuffix(url, "/debug/stats")
	if code, b := get(base + "/debug/pprof/goroutine?debug=1"); code != 200 || !strings.HasPrefix(string(b), "goroutine profile: total ") {
		t.Errorf("goroutine profile: %d %.80q", code, b)
	}
	if code, _ := get(base + "/debug/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/cmdline: status %d, want 404 (the command line may hold secrets)", code)
	}
	cancel()
	waitFor(t, "the debug server to close", func() bool {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err != nil
	})
}

// TestDebugAddrLoopbackOnly: a non-loopback --debug-addr is a usage error.
func TestDebugAddrLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":6060", "192.0.2.1:80", "nonsense"} {
		got := mtrun(t, "", nil, "--debug-addr", addr, "--url", "http://127.0.0.1:1")
		if got.code != 2 || !strings.Contains(got.stderr, "--debug-addr") {
			t.Errorf("--debug-addr %s: exit %d, stderr %q; want 2 and an error naming the flag", addr, got.code, got.stderr)
		}
	}
}
