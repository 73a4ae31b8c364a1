package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := Start(ctx, Config{Model: "started"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q", r.URL)
	}
	for path, want := range map[string]int{"/v1/models": 200, "/health": 200, "/nope": 404} {
		resp, err := http.Get(r.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if path == "/v1/models" && !strings.Contains(string(b), `"id":"started"`) {
			t.Errorf("models %s", b)
		}
	}
	// A second server on the same address fails with a clear error.
	if _, err := Start(ctx, Config{Addr: strings.TrimPrefix(r.URL, "http://")}); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("second Start on the same address: %v", err)
	}
	cancel()
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server still running after its context was cancelled")
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := http.Get(r.URL + "/health"); err == nil {
		t.Fatal("server still answers after Close")
	}
}

func TestStartInvalidConfig(t *testing.T) {
	t.Parallel()
	if _, err := Start(context.Background(), Config{Faults: Faults{ErrorRate: 2}}); err == nil {
		t.Fatal("Start accepted an invalid config")
	}
}
