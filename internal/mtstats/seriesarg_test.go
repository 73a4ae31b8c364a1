package mtstats

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/metrics"
)

// realSeries writes, as mtrun's scraper does, four scrapes one second
// apart of the real SGLang exposition in internal/metrics/testdata, and
// returns the series file's bytes.
func realSeries(t *testing.T) []byte {
	t.Helper()
	prom, err := os.ReadFile(filepath.Join("..", "metrics", "testdata", "sglang.prom"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := metrics.NewWriter(&buf)
	for s := range 4 {
		samples, err := metrics.Parse(bytes.NewReader(prom))
		if err != nil {
			t.Fatal(err)
		}
		one := 1.0
		samples = append(samples, metrics.Sample{Name: metrics.Up, Type: "gauge", Labels: map[string]string{}, Value: &one})
		for i := range samples {
			samples[i].RunID, samples[i].Time, samples[i].URL = "r", at(float64(s)), "http://127.0.0.1:30000/metrics"
		}
		metrics.Tag(samples)
		if err := w.Write(samples); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// seriesRecord writes, in dir, a records file of one request inside
// realSeries' scrapes, with cache figures, and returns its path.
func seriesRecord(t *testing.T, dir string) string {
	t.Helper()
	records := filepath.Join(dir, "r.jsonl")
	line := `{"run_id":"r","seq":0,"conversation_id":"c","turn":0,"phase":"measure","start":"2026-11-23T22:00:01Z","end":"2026-11-23T22:00:02Z","status":200,"prompt_tokens":10,"cached_tokens":5}` + "\n"
	if err := os.WriteFile(records, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return records
}

// Issue 23: `mtstats r.jsonl r.metrics.jsonl` read the series as records
// (108 "malformed" lines, no Server metrics section, exit 0).
func TestSeriesAsArgument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	records := seriesRecord(t, dir)
	plain := realSeries(t)
	c := compressions(t, plain)
	// Names that do not say "metrics": the content decides.
	files := map[string][]byte{"scrapes.jsonl": plain, "scrapes.jsonl.gz": c["gzip"], "scrapes.jsonl.zst": c["zstd"]}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(o Options) (string, string, error) {
		var out, errb bytes.Buffer
		o.Out, o.Err, o.Format = &out, &errb, "json"
		err := Run(context.Background(), o)
		return out.String(), errb.String(), err
	}
	want, _, err := run(Options{Inputs: []string{records}, Metrics: filepath.Join(dir, "scrapes.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Server *struct {
			Replicas []json.RawMessage `json:"replicas"`
		} `json:"server"`
	}
	if err := json.Unmarshal([]byte(want), &rep); err != nil || rep.Server == nil || len(rep.Server.Replicas) != 1 {
		t.Fatalf("--metrics-file: no server section with one replica (%v):\n%s", err, want)
	}
	for n := range files {
		p := filepath.Join(dir, n)
		want, _, err := run(Options{Inputs: []string{records}, Metrics: p})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range [][]string{{records, p}, {p, records}} {
			got, stderr, err := run(Options{Inputs: in})
			if err != nil || stderr != "" {
				t.Errorf("mtstats %q: %v, stderr %q", in, err, stderr)
				continue
			}
			if got != want {
				t.Errorf("mtstats %q differs from --metrics-file:\n%s\nwant\n%s", in, got, want)
			}
		}
	}
	p := filepath.Join(dir, "scrapes.jsonl.zst")
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"no records", Options{Inputs: []string{p}}, "give the records file too"},
		{"two series", Options{Inputs: []string{records, p, filepath.Join(dir, "scrapes.jsonl")}}, "both server-metrics series"},
		{"and another --metrics-file", Options{Inputs: []string{records, p}, Metrics: filepath.Join(dir, "scrapes.jsonl")}, "--metrics-file names"},
	} {
		if _, _, err := run(tc.o); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

// A named file that is neither records nor a series is an error naming
// it; records with a bad first line, empty and Parquet files stay records.
func TestInputKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := `{"run_id":"r","seq":0,"conversation_id":"c","turn":0,"phase":"measure","start":"2026-11-23T22:00:01Z","end":"2026-11-23T22:00:02Z","status":200}` + "\n"
	for _, tc := range []struct {
		name, content string
		want          inputKind
		wantErr       string
	}{
		{"records", rec, kindRecords, ""},
		{"records after a malformed line", "{\"run_id\": 3}\n" + rec, kindRecords, ""},
		{"records cut short", rec[:40], kindRecords, ""},
		{"empty", "", kindRecords, ""},
		{"parquet", "PAR1\x00\x01", kindRecords, ""},
		{"series", string(realSeries(t)), kindSeries, ""},
		{"a manifest", "{\n  \"run_id\": \"r\"\n}\n", kindRecords, "neither records nor a server-metrics series"},
		{"csv", "a,b\n1,2\n", kindRecords, "neither records nor a server-metrics series"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := kindOf(p)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), p+": ") {
				t.Errorf("%s: error %v, want %q naming the file", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: kindOf = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
