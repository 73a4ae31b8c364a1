package metrics

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// warnings collects Warnf messages.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warnf(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, fmt.Sprintf(format, args...))
}

// manualTicker returns a Ticker whose ticks the test sends; a send returns
// once the scraper has taken the tick, and the next send only once that
// scrape is written.
func manualTicker(ch chan time.Time) func(time.Duration) (<-chan time.Time, func()) {
	return func(time.Duration) (<-chan time.Time, func()) { return ch, func() {} }
}

func readSeries(t *testing.T, b []byte) []Sample {
	t.Helper()
	r := NewReader(bytes.NewReader(b), "series")
	var out []Sample
	for r.Scan() {
		out = append(out, r.Sample())
	}
	if r.Err() != nil {
		t.Fatalf("series file invalid: %v", r.Err())
	}
	return out
}

// TestScrapeFailsMidRun: the endpoint answers, fails twice with a 500,
// then answers again. The scrapes go on, the failure is warned about once
// and its recovery once, and the series file holds every scrape (up=0
// rows for the failures) and stays valid.
func TestScrapeFailsMidRun(t *testing.T) {
	expo, err := os.ReadFile(filepath.Join("testdata", "vllm.prom"))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sekrit-key" {
			t.Errorf("scrape without the target's header: %v", r.Header)
		}
		switch k := n.Add(1); k {
		case 3, 4:
			http.Error(w, "engine dead sekrit-key", http.StatusInternalServerError)
		default:
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			_, _ = w.Write(expo)
		}
	}))
	defer srv.Close()
	target := strings.Replace(srv.URL, "http://", "http://user:pass-word@", 1) + "/metrics"
	var out bytes.Buffer
	var warn warnings
	ticks := make(chan time.Time)
	s := Start(Options{
		Targets: []Target{{URL: target, Header: http.Header{"Authorization": {"Bearer sekrit-key"}}}},
		RunID:   "run-1", Warnf: warn.warnf, Ticker: manualTicker(ticks),
		Redact: func(s string) string { return strings.ReplaceAll(s, "sekrit-key", "[REDACTED]") },
	}, NewWriter(&out))
	for range 4 {
		ticks <- time.Now()
	}
	stats := s.Stop()
	if len(stats) != 1 || stats[0].Scrapes != 6 || stats[0].Failed != 2 {
		t.Errorf("stats %+v, want 6 scrapes, 2 failed", stats)
	}
	display := srv.URL + "/metrics"
	wantWarn := []string{
		"metrics " + display + ": HTTP 500 Internal Server Error (scraping goes on; failures are counted)",
		"metrics " + display + ": answers again",
		"metrics " + display + ": 2 of 6 scrapes failed",
	}
	if strings.Join(warn.msgs, "\n") != strings.Join(wantWarn, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warn.msgs, "\n"), strings.Join(wantWarn, "\n"))
	}
	if bytes.Contains(out.Bytes(), []byte("pass-word")) || bytes.Contains(out.Bytes(), []byte("sekrit")) {
		t.Error("a secret reached the series file")
	}
	ss := readSeries(t, out.Bytes())
	var ups []float64
	perScrape := map[time.Time]int{}
	for _, s := range ss {
		if s.RunID != "run-1" || s.URL != display || s.Replica != 0 {
			t.Fatalf("sample %+v", s)
		}
		perScrape[s.Time]++
		if s.Name == Up {
			ups = append(ups, *s.Value)
			if (*s.Value == 0) != (s.Error != "") {
				t.Errorf("up row %+v", s)
			}
		}
	}
	if fmt.Sprint(ups) != "[1 1 0 0 1 1]" {
		t.Errorf("up values %v, want [1 1 0 0 1 1]", ups)
	}
	if len(ss) != 4*68+6 {
		t.Errorf("%d samples, want %d", len(ss), 4*68+6)
	}
}

func TestFetchRefusesNonExpositions(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json404":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"no route"}}`))
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>x 1</html>"))
		case "/empty":
			w.Header().Set("Content-Type", "text/plain")
		case "/garbage":
			_, _ = w.Write([]byte("{\"a\": 1}\n"))
		case "/ok":
			_, _ = w.Write([]byte("x 1\n"))
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{
		"/json404": "HTTP 404", "/html": "not a Prometheus text exposition", "/empty": "empty exposition",
		"/garbage": "line 1", "/ok": "",
	} {
		err := Probe(context.Background(), nil, Target{URL: srv.URL + path})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	srv.Close()
	if err := Probe(context.Background(), nil, Target{URL: srv.URL + "/ok"}); err == nil || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("closed server: %v (the URL is the caller's to print)", err)
	}
}

// TestScrapeReplicas: each target is its own replica, scraped from Start
// to Stop, the first scrapes written before Start returns.
func TestScrapeReplicas(t *testing.T) {
	var srvs []*httptest.Server
	for i := range 2 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running %d\n", i+1)
		}))
		defer srv.Close()
		srvs = append(srvs, srv)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	s := Start(Options{Targets: []Target{{URL: srvs[0].URL}, {URL: srvs[1].URL}}, Ticker: manualTicker(make(chan time.Time))}, w)
	if w.Samples() != 4 {
		t.Errorf("after Start: %d samples written, want 4 (2 targets × (1 + up))", w.Samples())
	}
	s.Stop()
	for _, smp := range readSeries(t, out.Bytes()) {
		if smp.Name == "vllm:num_requests_running" && (*smp.Value != float64(smp.Replica+1) || smp.URL != srvs[smp.Replica].URL || smp.Canonical != Running) {
			t.Errorf("sample %+v", smp)
		}
	}
	if w.Samples() != 8 {
		t.Errorf("%d samples, want 8", w.Samples())
	}
}
