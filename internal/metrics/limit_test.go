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
	"sync/atomic"
	"testing"
	"time"
)

// junk writes n series that no engine exposes, as a hostile endpoint
// does (issue 24: 10^6 series took mtrun to 2.49 GB).
func junk(w *bytes.Buffer, n int) {
	fmt.Fprintf(w, "# HELP junk_series junk\n# TYPE junk_series gauge\n")
	for i := range n {
		fmt.Fprintf(w, "junk_series{i=\"%d\"} %d\n", i, i)
	}
}

// TestParseLimited: over MaxSeries the canonical series are kept wherever
// they come, the others dropped and counted; over MaxBytes the rest is
// not read and the cut line dropped; the real fixtures are under the
// defaults with nothing dropped.
func TestParseLimited(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"vllm.prom", "sglang.prom", "llamacpp.prom"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := ParseLimited(bytes.NewReader(b), Limits{})
		if err != nil || sc.Dropped != 0 || sc.Truncated || len(sc.Samples) != len(want) {
			t.Errorf("%s: %d samples (want %d), dropped %d, truncated %v, %v", f, len(sc.Samples), len(want), sc.Dropped, sc.Truncated, err)
		}
		if len(want) >= DefaultMaxSeries/100 || int64(len(b)) >= DefaultMaxBytes/100 {
			t.Errorf("%s: %d series, %d bytes: the defaults are not 100 times over it", f, len(want), len(b))
		}
	}
	var b bytes.Buffer
	junk(&b, 5000)
	b.WriteString("# HELP vllm:num_requests_running running\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 7\n")
	sc, err := ParseLimited(bytes.NewReader(b.Bytes()), Limits{MaxSeries: 100})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, s := range sc.Samples {
		if s.Canonical == Running && *s.Value == 7 {
			running++
		}
	}
	if len(sc.Samples) != 101 || sc.Dropped != 4900 || sc.Truncated || running != 1 {
		t.Errorf("max series 100: %d samples, dropped %d, truncated %v, canonical kept %d; want 101, 4900, false, 1", len(sc.Samples), sc.Dropped, sc.Truncated, running)
	}
	b.Reset()
	junk(&b, 1000)
	sc, err = ParseLimited(bytes.NewReader(b.Bytes()), Limits{MaxBytes: 1000})
	if err != nil || !sc.Truncated || len(sc.Samples) == 0 || len(sc.Samples) > 50 {
		t.Errorf("max bytes 1000: %d samples, truncated %v, %v", len(sc.Samples), sc.Truncated, err)
	}
	// A single line longer than the limit.
	sc, err = ParseLimited(strings.NewReader("x{a=\""+strings.Repeat("v", 1<<20)+"\"} 1\n"), Limits{MaxBytes: 1000})
	if !sc.Truncated || len(sc.Samples) != 0 || err != nil {
		t.Errorf("long line: %d samples, truncated %v, %v", len(sc.Samples), sc.Truncated, err)
	}
}

// TestScrapeLimits: a scrape over the limits keeps the canonical series,
// counts the drops in the stats and warns once for the run.
func TestScrapeLimits(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	junk(&b, 3000)
	b.WriteString("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 3\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(b.Bytes()) }))
	defer srv.Close()
	var out bytes.Buffer
	var warn warnings
	ticks := make(chan time.Time)
	s := Start(Options{Targets: []Target{{URL: srv.URL}}, Limits: Limits{MaxSeries: 10}, Warnf: warn.warnf, Ticker: manualTicker(ticks)}, NewWriter(&out))
	ticks <- time.Now()
	stats := s.Stop()
	if len(stats) != 1 || stats[0].Scrapes != 3 || stats[0].DroppedSeries != 3*2990 || stats[0].Failed != 0 {
		t.Errorf("stats %+v, want 3 scrapes, %d dropped", stats, 3*2990)
	}
	if len(warn.msgs) != 1 || !strings.Contains(warn.msgs[0], "2990 series dropped (over 10,") {
		t.Errorf("warnings %q, want one about the dropped series", warn.msgs)
	}
	waiting := 0
	for _, smp := range readSeries(t, out.Bytes()) {
		if smp.Canonical == Waiting {
			waiting++
		}
	}
	if waiting != 3 {
		t.Errorf("%d canonical waiting samples, want 3 (one per scrape)", waiting)
	}
}

// TestScrapeSlowEndpoint: an endpoint that answers its first scrape and
// then never again holds neither Stop (issue 24: a 2 s run ended at
// 16.6 s) nor a scrape beyond its timeout; the cut scrapes are counted.
func TestScrapeSlowEndpoint(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			fmt.Fprintln(w, "vllm:num_requests_running 1")
			return
		}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	ticks := make(chan time.Time, 1)
	var out bytes.Buffer
	s := Start(Options{Targets: []Target{{URL: srv.URL}}, Timeout: time.Hour, EdgeTimeout: 50 * time.Millisecond, Ticker: manualTicker(ticks)}, NewWriter(&out))
	ticks <- time.Now() // a scrape that will be in flight at Stop
	done := make(chan []TargetStats)
	go func() { done <- s.Stop() }()
	select {
	case stats := <-done:
		if stats[0].Failed < 1 {
			t.Errorf("stats %+v: the last scrape's failure is not counted", stats)
		}
	case <-time.After(time.Minute):
		t.Fatal("Stop still waiting a minute after a 50 ms edge timeout")
	}
	if ctx := context.Background(); Probe(ctx, nil, Target{URL: srv.URL}) == nil {
		t.Error("probe of a hung endpoint succeeded")
	}
}

// TestScrapeRedactsEverything: an endpoint that echoes the request's
// headers into metric names, label names and values and HELP text writes
// no secret into the series file (issue 24).
func TestScrapeRedactsEverything(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-5d4c3b2a1f"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		name := "vllm:echo_" + strings.NewReplacer(" ", "_", "-", "_").Replace(auth)
		fmt.Fprintf(w, "# HELP %s echoes %s\n# TYPE %s gauge\n%s{auth=%q,%s=\"x\"} 1\n", name, auth, name, name, auth, strings.NewReplacer(" ", "_", "-", "_").Replace(secret))
		fmt.Fprintf(w, "{%q, a=\"b\"} 2\n", "vllm:utf8 "+auth)
	}))
	defer srv.Close()
	forms := []string{secret, strings.ReplaceAll(secret, "-", "_")}
	redact := func(s string) string {
		for _, f := range forms {
			s = strings.ReplaceAll(s, f, "[REDACTED]")
		}
		return s
	}
	var out bytes.Buffer
	s := Start(Options{Targets: []Target{{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer " + secret}}}}, Redact: redact, Ticker: manualTicker(make(chan time.Time))}, NewWriter(&out))
	s.Stop()
	if !bytes.Contains(out.Bytes(), []byte("vllm:echo_Bearer_[REDACTED]")) {
		t.Errorf("the echoed series are not in the file:\n%s", out.Bytes())
	}
	for _, f := range forms {
		if bytes.Contains(out.Bytes(), []byte(f)) {
			t.Errorf("series file holds %q:\n%s", f, out.Bytes())
		}
	}
}

// FuzzParseLimited: whatever the exposition, ParseLimited does not panic,
// keeps at most MaxSeries series besides the canonical ones, and, when no
// limit is reached, gives exactly Parse's samples for an exposition Parse
// accepts.
func FuzzParseLimited(f *testing.F) {
	for _, name := range []string{"vllm.prom", "sglang.prom", "llamacpp.prom"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 1000, int64(1<<20))
		f.Add(b, 3, int64(500))
	}
	f.Add([]byte("# HELP x h\n# TYPE x gauge\nx{a=\"b\"} 1\n  y 2\n{\"z.w\"} 3\n"), 1, int64(40))
	f.Fuzz(func(t *testing.T, in []byte, maxSeries int, maxBytes int64) {
		l := Limits{MaxSeries: max(1, maxSeries%2000), MaxBytes: max(1, maxBytes%(4<<20))}
		sc, err := ParseLimited(bytes.NewReader(in), l)
		if err != nil {
			return
		}
		other := 0
		for _, s := range sc.Samples {
			if !canonicalSet[s.Name] {
				other++
			}
		}
		if other > l.MaxSeries {
			t.Fatalf("%d non-canonical samples kept over a limit of %d", other, l.MaxSeries)
		}
		if sc.Dropped > 0 || sc.Truncated {
			return
		}
		want, werr := Parse(bytes.NewReader(in))
		if werr != nil {
			return // HELP lines, which ParseLimited never reads, may be what Parse rejects
		}
		if len(want) != len(sc.Samples) {
			t.Fatalf("%d samples, Parse gives %d", len(sc.Samples), len(want))
		}
		for i := range want {
			a, b := want[i], sc.Samples[i]
			if a.Name != b.Name || LabelKey(a.Labels) != LabelKey(b.Labels) || a.Type != b.Type || a.NonFinite != b.NonFinite || (a.Value == nil) != (b.Value == nil) || a.Value != nil && *a.Value != *b.Value {
				t.Fatalf("sample %d: %+v, Parse gives %+v", i, b, a)
			}
		}
	})
}
