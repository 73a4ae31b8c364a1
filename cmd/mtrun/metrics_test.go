package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/mtstats"
	"github.com/mtkit/mtkit/internal/sim"
)

// readSeriesFile reads a series file, failing on any invalid line.
func readSeriesFile(t *testing.T, path string) []metrics.Sample {
	t.Helper()
	in, err := iox.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := metrics.NewReader(in, path)
	var out []metrics.Sample
	for r.Scan() {
		out = append(out, r.Sample())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// serverJSON runs mtstats' JSON report on a records file and returns its
// "server" object.
func serverJSON(t *testing.T, records string, extra ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	o := mtstats.Options{Inputs: []string{records}, Out: &out, Err: &errb, Format: "json"}
	if len(extra) > 0 {
		o.Metrics = extra[0]
	}
	if err := mtstats.Run(context.Background(), o); err != nil {
		t.Fatalf("mtstats: %v\n%s", err, errb.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	srv, _ := rep["server"].(map[string]any)
	return srv
}

// TestSimServerHitRateEqualsClient: on the simulator, the server-side
// prefix-cache hit rate mtstats computes from the scraped counters equals
// the client-side one from the records' cached_tokens exactly, and the
// counters' deltas equal the records' token sums.
func TestSimServerHitRateEqualsClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	records := filepath.Join(dir, "run.jsonl")
	got := runMtrun(t, convJSONL(6, 4, 24), nil, "--sim", "--sim-config", "ttft=1ms,decode=1ms,cache=100000",
		"--clients", "3", "--tokenizer", "none", "--records", records, "--run-id", "r1", "--quiet")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	series := filepath.Join(dir, "run.metrics.jsonl")
	ss := readSeriesFile(t, series)
	if len(ss) == 0 || ss[0].RunID != "r1" || !strings.HasSuffix(ss[0].URL, "/metrics") {
		t.Fatalf("series: %d samples, first %+v", len(ss), ss)
	}
	var man struct {
		Metrics struct {
			File    string                `json:"file"`
			Targets []metrics.TargetStats `json:"targets"`
		} `json:"metrics"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil || man.Metrics.File != series || len(man.Metrics.Targets) != 1 || man.Metrics.Targets[0].Failed != 0 || man.Metrics.Targets[0].Scrapes < 2 {
		t.Fatalf("manifest metrics: %+v %v", man.Metrics, err)
	}
	var prompt, cached float64
	for _, r := range readFiles(t, records) {
		prompt += float64(*r.PromptTokens)
		cached += float64(*r.CachedTokens)
	}
	if cached == 0 {
		t.Fatal("no cached tokens: the test proves nothing")
	}
	srv := serverJSON(t, records) // found next to the records
	if srv == nil {
		t.Fatal("no server section")
	}
	total := srv["total"].(map[string]any)
	if srv["server_cache_hit_rate"] != srv["client_cache_hit_rate"] || srv["server_cache_hit_rate"] != cached/prompt {
		t.Errorf("server %v, client %v, records %v", srv["server_cache_hit_rate"], srv["client_cache_hit_rate"], cached/prompt)
	}
	if total["prefix_cache_queries"] != prompt || total["prefix_cache_hits"] != cached {
		t.Errorf("counter deltas %v / %v, records %v / %v", total["prefix_cache_hits"], total["prefix_cache_queries"], cached, prompt)
	}
}

// TestMetricsEndpointFailsMidRun: a --metrics-url that answers the first
// scrape and fails every later one warns, does not fail the run, and
// leaves a valid series file with up=0 rows.
func TestMetricsEndpointFailsMidRun(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{})
	var n atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0\n"))
	}))
	defer flaky.Close()
	dir := t.TempDir()
	records := filepath.Join(dir, "run.jsonl.zst")
	metricsURL := strings.Replace(flaky.URL, "http://", "http://scraper:pw-secret@", 1) + "/metrics"
	got := runMtrun(t, convJSONL(2, 2, 4), nil, "--url", srv.URL, "--tokenizer", "none", "--records", records,
		"--metrics-url", metricsURL, "--quiet")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	display := flaky.URL + "/metrics"
	for _, want := range []string{
		"mtrun: warning: metrics " + display + ": HTTP 503 Service Unavailable (scraping goes on; failures are counted)\n",
		"mtrun: warning: metrics " + display + ": ",
	} {
		if !strings.Contains(got.stderr, want) {
			t.Errorf("stderr %q lacks %q", got.stderr, want)
		}
	}
	ss := readSeriesFile(t, filepath.Join(dir, "run.metrics.jsonl.zst"))
	var ups []float64
	for _, s := range ss {
		if s.Name == metrics.Up {
			ups = append(ups, *s.Value)
		}
	}
	if len(ups) < 2 || ups[0] != 1 || ups[len(ups)-1] != 0 {
		t.Errorf("up rows %v: want 1 then 0s", ups)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "run.manifest.json"))
	for _, out := range []string{got.stderr, string(b)} {
		if strings.Contains(out, "pw-secret") {
			t.Errorf("the metrics URL's password reached an output: %s", out)
		}
	}
	if !bytes.Contains(b, []byte(`"failed": `)) {
		t.Errorf("manifest without the scrape counts: %s", b)
	}
}

// TestMetricsDefaultEndpoint: the server's own /metrics is scraped only
// when it answers in the exposition format, silently skipped when not,
// and never with --no-metrics.
func TestMetricsDefaultEndpoint(t *testing.T) {
	t.Parallel()
	s, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	noMetrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer noMetrics.Close()
	withMetrics := httptest.NewServer(s)
	defer withMetrics.Close()
	for _, tc := range []struct {
		name, url string
		args      []string
		want      bool
	}{
		{"answers", withMetrics.URL + "/v1", nil, true},
		{"404", noMetrics.URL, nil, false},
		{"off", withMetrics.URL, []string{"--no-metrics"}, false},
	} {
		dir := t.TempDir()
		args := append([]string{"--url", tc.url, "--tokenizer", "none", "--records", filepath.Join(dir, "r.jsonl"), "--quiet"}, tc.args...)
		got := runMtrun(t, convJSONL(1, 1, 2), nil, args...)
		if got.code != 0 || got.stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", tc.name, got.code, got.stderr)
		}
		_, err := os.Stat(filepath.Join(dir, "r.metrics.jsonl"))
		if (err == nil) != tc.want {
			t.Errorf("%s: series file exists %v, want %v", tc.name, err == nil, tc.want)
		}
	}
}

func TestMetricsFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-interval", "0s"}, "--metrics-interval 0s: want a positive duration"},
		{[]string{"--metrics-url", "ftp://u:pw-secret@h/metrics"}, `--metrics-url "ftp://h/metrics": want an http(s) URL`},
		{[]string{"--metrics-url", "localhost:9090"}, "want an http(s) URL"},
	} {
		got := runMtrun(t, "", nil, append([]string{"--url", "http://127.0.0.1:1"}, tc.args...)...)
		if got.code != 2 || !strings.Contains(got.stderr, tc.want) || strings.Contains(got.stderr, "pw-secret") {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, got.code, got.stderr, tc.want)
		}
	}
}

// TestMetricsRecordsOnStdout: an explicit --metrics-url with the records
// on stdout and no --metrics-file warns that nothing is kept.
func TestMetricsRecordsOnStdout(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{})
	got := runMtrun(t, convJSONL(1, 1, 2), nil, "--url", srv.URL, "--tokenizer", "none", "--quiet", "--metrics-url", srv.URL+"/metrics")
	if got.code != 0 || !strings.Contains(got.stderr, "mtrun: warning: --metrics-url: the records go to stdout, so the series are not kept") {
		t.Errorf("exit %d, stderr %q", got.code, got.stderr)
	}
	dir := t.TempDir()
	series := filepath.Join(dir, "s.jsonl")
	got = runMtrun(t, convJSONL(1, 1, 2), nil, "--url", srv.URL, "--tokenizer", "none", "--quiet", "--metrics-file", series)
	if got.code != 0 || got.stderr != "" || len(readSeriesFile(t, series)) == 0 {
		t.Errorf("--metrics-file with records on stdout: exit %d, stderr %q", got.code, got.stderr)
	}
}

// TestMetricsLimitFlags: --metrics-max-series and --metrics-max-bytes
// reach the scraper (drops counted in the manifest, canonical series
// kept), and a limit that is not positive is a usage error.
func TestMetricsLimitFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	records := filepath.Join(dir, "run.jsonl")
	// echo-secrets adds a series per X- header, beyond the canonical ones.
	got := runMtrun(t, convJSONL(2, 2, 4), nil, "--sim", "--sim-config", "ttft=1ms,decode=1ms,cache=100000,echo-secrets=true",
		"--header", "X-A: value-a-1", "--header", "X-B: value-b-2", "--tokenizer", "none", "--records", records, "--quiet", "--metrics-max-series", "2")
	if got.code != 0 || !strings.Contains(got.stderr, "series dropped (over 2, --metrics-max-series)") {
		t.Fatalf("exit %d, stderr %q; want a warning about the dropped series", got.code, got.stderr)
	}
	var man struct {
		Metrics struct {
			Targets []metrics.TargetStats `json:"targets"`
		} `json:"metrics"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil || len(man.Metrics.Targets) != 1 || man.Metrics.Targets[0].DroppedSeries == 0 {
		t.Fatalf("manifest metrics: %+v %v", man.Metrics, err)
	}
	canonical := 0
	for _, s := range readSeriesFile(t, filepath.Join(dir, "run.metrics.jsonl")) {
		if s.Canonical == metrics.PrefixHits {
			canonical++
		}
	}
	if canonical < 2 {
		t.Errorf("%d prefix-cache-hit samples: the canonical series were not kept over the limit", canonical)
	}
	for _, bad := range [][]string{{"--metrics-max-series", "0"}, {"--metrics-max-bytes", "-1"}} {
		if got := runMtrun(t, "", nil, append([]string{"--sim"}, bad...)...); got.code != command.ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %q", bad, got.code, got.stderr)
		}
	}
}
