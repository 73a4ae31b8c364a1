package mtstats

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/serverstats"
	"github.com/mtkit/mtkit/internal/stats"
)

var t0 = time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// writeSeries writes rows (replica, second, name, labels, value; a NaN
// value is an up=0 row) as a series file.
type row struct {
	replica int
	sec     float64
	name    string
	labels  map[string]string
	value   float64
}

func writeSeries(t *testing.T, rows []row) string {
	t.Helper()
	var buf bytes.Buffer
	w := metrics.NewWriter(&buf)
	for _, r := range rows {
		s := metrics.Sample{RunID: "r", Time: at(r.sec), Replica: r.replica, URL: "http://h" + string(rune('0'+r.replica)) + "/metrics",
			Name: r.name, Type: "gauge", Labels: r.labels}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		if strings.HasSuffix(r.name, "_total") {
			s.Type = "counter"
		}
		v := r.value
		if math.IsNaN(v) {
			v, s.Error = 0, "HTTP 503"
		}
		s.Value = &v
		ss := []metrics.Sample{s}
		metrics.Tag(ss)
		if err := w.Write(ss); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "s.metrics.jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServerReport(t *testing.T) {
	e0, e1 := map[string]string{"engine": "0"}, map[string]string{"engine": "1"}
	var rows []row
	queries := []float64{100, 200, 300, 50, 150, 1000} // reset at 3 s
	hits := []float64{0, 100, 150, 20, 70, 500}
	for s := range 6 {
		sec := float64(s)
		rows = append(rows,
			row{0, sec, metrics.Up, nil, 1},
			row{0, sec, "vllm:prefix_cache_queries_total", e0, queries[s]},
			row{0, sec, "vllm:prefix_cache_hits_total", e0, hits[s]},
			row{0, sec, "vllm:num_requests_running", e0, sec},
			row{0, sec, "vllm:kv_cache_usage_perc", e0, 0.2},
			row{0, sec, "vllm:kv_cache_usage_perc", e1, 0.4},
			row{1, sec, metrics.Up, nil, 1},
			row{1, sec, "sglang:prompt_tokens_total", nil, 10 * sec},
			row{1, sec, "sglang:cached_tokens_total", nil, 5 * sec},
			row{1, sec, "sglang:num_running_reqs", nil, 7},
		)
		if s >= 3 { // created during the run: counted from 0
			rows = append(rows, row{0, sec, "vllm:prefix_cache_queries_total", e1, 10 + 20*(sec-3)})
		}
	}
	rows = append(rows, row{1, 2.5, metrics.Up, nil, math.NaN()})
	path := writeSeries(t, rows)
	pts := []stats.Point{{Start: float64(at(1.7).UnixNano()) / 1e9, TTFTMs: 10}, {Start: float64(at(1.9).UnixNano()) / 1e9, TTFTMs: 30}}
	rep, err := serverstats.Join(path, at(1.5).UnixNano(), at(3.5).UnixNano(), 0.25, pts)
	if err != nil {
		t.Fatal(err)
	}
	r0, r1 := rep.Replicas[0].Stats, rep.Replicas[1].Stats
	checks := []struct {
		name      string
		got, want float64
	}{
		{"replica 0 queries (reset, lazy series)", *r0.PrefixQueries, 250 + 30},
		{"replica 0 hits", *r0.PrefixHits, 120},
		{"replica 0 running mean", float64(r0.Running.Mean), 2.5},
		{"replica 0 running max", float64(r0.Running.Max), 4},
		{"replica 0 kv mean (engines averaged)", float64(r0.KVUsage.Mean), 0.30000000000000004},
		{"replica 1 queries (SGLang prompt tokens)", *r1.PrefixQueries, 30},
		{"replica 1 hits (SGLang cached tokens)", *r1.PrefixHits, 15},
		{"replica 1 hit rate", float64(r1.HitRate), 0.5},
		{"total hit rate", float64(rep.ServerSide), 135.0 / 310},
		{"client hit rate", float64(rep.ClientSide), 0.25},
		{"total running mean (replicas added)", float64(rep.Total.Running.Mean), 9.5},
		{"replica 1 failed scrapes", float64(rep.Replicas[1].FailedScrapes), 1},
		{"replica 1 scrapes", float64(rep.Replicas[1].Scrapes), 7},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r0.Preemptions != nil || !math.IsNaN(float64(r0.Waiting.Mean)) {
		t.Errorf("absent quantities: preemptions %v, waiting %v", r0.Preemptions, r0.Waiting)
	}
	tl := rep.Replicas[0].Timeline
	if len(tl) != 4 || tl[0].T != -0.5 || tl[3].T != 2.5 {
		t.Fatalf("timeline %+v", tl)
	}
	if p := tl[1]; p.HitRate != 0.5 || p.Requests != 2 || p.TTFTMs != 20 || p.Running != 2 {
		t.Errorf("timeline point at 2 s: %+v", p)
	}
	var b bytes.Buffer
	if err := report.Render(&b, &report.Report{Summary: &stats.Group{}, Server: rep}, report.FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cache_hit_rate_server = 43.55% (prefix-cache hits 135 of 310 queried tokens)",
		"cache_hit_rate_client = 25.00%",
		"running = mean 9.50, max 11.00",
		"2 endpoint(s), 13 scrapes, 1 failed",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestSeriesPathAndErrors(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "run.parquet")
	if serverstats.SeriesPath(rec) != "" {
		t.Error("found a series file that does not exist")
	}
	series := filepath.Join(dir, "run.metrics.jsonl.zst")
	if err := os.WriteFile(series, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := serverstats.SeriesPath(rec); got != series {
		t.Errorf("SeriesPath = %q, want %q", got, series)
	}
	records := filepath.Join(dir, "r.jsonl")
	line := `{"run_id":"r","seq":0,"conversation_id":"c","turn":0,"phase":"measure","start":"2026-11-23T22:00:01Z","end":"2026-11-23T22:00:02Z","status":200,"prompt_tokens":10,"cached_tokens":5}` + "\n"
	if err := os.WriteFile(records, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "r.metrics.jsonl")
	if err := os.WriteFile(bad, []byte(`{"time":"2026-11-23T22:00:00Z","name":"x","type":"gauge","value":1}`+"\n"+`{"time":"2026-11-23T22:00:00Z","type":"gauge","value":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := Run(context.Background(), Options{Inputs: []string{records}, Out: &out, Err: &errb})
	if err == nil || !strings.Contains(err.Error(), bad+":2: name: missing") {
		t.Errorf("malformed series file: %v", err)
	}
	if err := Run(context.Background(), Options{Inputs: []string{records}, Out: &out, Err: &errb, NoMetrics: true}); err != nil {
		t.Errorf("--no-metrics: %v", err)
	}
}
