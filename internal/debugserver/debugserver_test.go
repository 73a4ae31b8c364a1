package debugserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServe: the server serves the goroutine count and memory on
// loopback, serves no command line (secrets), and stops with its context.
func TestServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
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
	code, b := get(s.URL)
	var st Stats
	if err := json.Unmarshal(b, &st); code != 200 || err != nil || st.Goroutines < 2 || st.HeapAlloc == 0 || st.Sys == 0 {
		t.Fatalf("GET %s: %d %s (%v)", s.URL, code, b, err)
	}
	base := strings.TrimSuffix(s.URL, "/debug/stats")
	if code, b := get(base + "/debug/pprof/goroutine?debug=1"); code != 200 || !strings.HasPrefix(string(b), "goroutine profile: total ") {
		t.Errorf("goroutine profile: %d %.80q", code, b)
	}
	if code, _ := get(base + "/debug/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/cmdline: status %d, want 404 (the command line may hold secrets)", code)
	}
	cancel()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop with its context")
	}
	if resp, err := http.Get(s.URL); err == nil {
		resp.Body.Close()
		t.Error("the server still answers after it stopped")
	}
}

func TestServeLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":6060", "192.0.2.1:80", "example.com:80", "nonsense"} {
		s, err := Serve(context.Background(), addr)
		if err == nil {
			t.Errorf("Serve(%q) = %v, want an error", addr, s.URL)
			continue
		}
		if !errors.Is(err, ErrAddress) {
			t.Errorf("Serve(%q): %v, want ErrAddress", addr, err)
		}
	}
}
