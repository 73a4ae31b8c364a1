package mtstats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// runJSON runs mtstats with --format json over files and decodes the
// report into a generic map.
func runJSON(t *testing.T, o Options) (map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	o.Out, o.Err, o.Format = &out, &errb, report.FormatJSON
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("Run: %v\nstderr: %s", err, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return m, errb.String()
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// TestSummaryIndependent recomputes the summary straight from the records
// and compares it with the report.
func TestSummaryIndependent(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 1, Run: "r1", Convs: 60, MaxTurns: 6, Warmup: 5, FailEvery: 17, ITL: true})
	p := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	m, _ := runJSON(t, Options{Inputs: []string{p}})

	var ttft, itl, lat []float64
	var minStart, maxEnd time.Time
	requests, failed, retries := 0, 0, 0
	var out int64
	for _, r := range recs {
		if r.Phase == record.PhaseWarmup {
			continue
		}
		if minStart.IsZero() || r.Start.Before(minStart) {
			minStart = r.Start
		}
		if r.End.After(maxEnd) {
			maxEnd = r.End
		}
		if r.Retried {
			retries++
			continue
		}
		requests++
		if r.ErrorClass != "" {
			failed++
			continue
		}
		ttft = append(ttft, float64(*r.TTFTNs)/1e6)
		lat = append(lat, float64(r.LatencyNs)/1e6)
		for _, g := range r.ITLNs {
			itl = append(itl, float64(g)/1e6)
		}
		out += *r.CompletionTokens
	}
	runtime := maxEnd.Sub(minStart).Seconds()
	check := func(name string, got any, want float64) {
		t.Helper()
		g, ok := got.(float64)
		if !ok || math.Abs(g-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	s := m["summary"].(map[string]any)
	check("requests", s["requests"], float64(requests))
	check("failed", s["failed"], float64(failed))
	check("retries", s["retries"], float64(retries))
	check("runtime_sec", s["runtime_sec"], runtime)
	check("requests_per_sec", s["requests_per_sec"], float64(requests)/runtime)
	check("output_tokens_per_sec", s["output_tokens_per_sec"], float64(out)/runtime)
	check("errors.timeout", get(s, "errors", "timeout"), float64(failed))
	for _, c := range []struct {
		name string
		xs   []float64
	}{{"ttft_ms", ttft}, {"itl_ms", itl}, {"latency_ms", lat}} {
		slices.Sort(c.xs)
		n := float64(len(c.xs))
		check(c.name+".count", get(s, "metrics", c.name, "count"), n)
		// Order statistics by hand: p50 of the sorted samples.
		h := (n - 1) * 0.5
		lo := int(h)
		want := c.xs[lo] + (h-float64(lo))*(c.xs[min(lo+1, len(c.xs)-1)]-c.xs[lo])
		check(c.name+".p50", get(s, "metrics", c.name, "p50"), want)
		check(c.name+".max", get(s, "metrics", c.name, "max"), c.xs[len(c.xs)-1])
	}
	if n := len(itl); n >= 1000 {
		if get(s, "metrics", "itl_ms", "p99.9") == nil {
			t.Error("itl_ms: p99.9 missing with ≥1000 samples")
		}
	}
	if get(s, "metrics", "ttft_ms", "p99.99") != nil {
		t.Error("ttft_ms: p99.99 with <10000 samples")
	}
	check("inputs.warmup_skipped", get(m, "inputs", "warmup_skipped"), float64(len(recs)-requests-retries))
}

// TestMergeShardsDuplicates merges two shards and a repeated file: every
// record is counted once and the duplicates are reported.
func TestMergeShardsDuplicates(t *testing.T) {
	t.Parallel()
	a := statstest.Records(statstest.Config{Seed: 2, Run: "r", Shard: 0, Convs: 20, MaxTurns: 4})
	b := statstest.Records(statstest.Config{Seed: 3, Run: "r", Shard: 1, Convs: 15, MaxTurns: 4})
	pa := writeTemp(t, "a.jsonl", statstest.JSONL(t, a))
	pb := writeTemp(t, "b.parquet", statstest.Parquet(t, b))
	both := writeTemp(t, "both.jsonl", append(statstest.JSONL(t, a), statstest.JSONL(t, b)...))
	m, stderr := runJSON(t, Options{Inputs: []string{pa, pb, "again=" + pa}, Stdin: nil})
	if got := get(m, "summary", "requests"); got != float64(len(a)+len(b)) {
		t.Errorf("requests %v, want %d", got, len(a)+len(b))
	}
	if got := get(m, "inputs", "duplicates"); got != float64(len(a)) {
		t.Errorf("duplicates %v, want %d", got, len(a))
	}
	if !strings.Contains(stderr, "duplicate records") {
		t.Errorf("stderr %q", stderr)
	}
	ref, _ := runJSON(t, Options{Inputs: []string{both}})
	if x, y := get(m, "summary", "metrics"), get(ref, "summary", "metrics"); !jsonEqual(x, y) {
		t.Error("merged shards differ from the concatenated file")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestCacheHitNull(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 4, Run: "r", Convs: 5, MaxTurns: 3, NoCache: true})
	m, _ := runJSON(t, Options{Inputs: []string{writeTemp(t, "n.jsonl", statstest.JSONL(t, recs))}, By: "turn"})
	if v, ok := get(m, "summary").(map[string]any)["cache_hit_rate"]; !ok || v != nil {
		t.Errorf("cache_hit_rate = %v, want null", v)
	}
	recs = statstest.Records(statstest.Config{Seed: 4, Run: "r", Convs: 5, MaxTurns: 3})
	var cached, prompt int64
	for _, r := range recs {
		cached += *r.CachedTokens
		prompt += *r.PromptTokens
	}
	m, _ = runJSON(t, Options{Inputs: []string{writeTemp(t, "c.jsonl", statstest.JSONL(t, recs))}})
	if v := get(m, "summary", "cache_hit_rate"); v != float64(cached)/float64(prompt) {
		t.Errorf("cache_hit_rate = %v, want %v", v, float64(cached)/float64(prompt))
	}
}

func TestMalformedAndStrict(t *testing.T) {
	t.Parallel()
	good := statstest.JSONL(t, statstest.Records(statstest.Config{Seed: 5, Run: "r", Convs: 3, MaxTurns: 2}))
	data := append(append([]byte("not json\n"), good...), `{"run_id":"r","seq":999,"start":"2026-`...)
	p := writeTemp(t, "m.jsonl", data)
	m, stderr := runJSON(t, Options{Inputs: []string{p}})
	if get(m, "inputs", "malformed") != 2.0 || get(m, "inputs", "truncated") != 1.0 {
		t.Errorf("inputs %v", m["inputs"])
	}
	if !strings.Contains(stderr, p+":1: invalid JSON") || !strings.Contains(stderr, "truncated last line") {
		t.Errorf("stderr %q", stderr)
	}
	err := Run(context.Background(), Options{Inputs: []string{p}, Strict: true, Out: io.Discard, Err: io.Discard})
	var se *record.SyntaxError
	if !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("strict: %v", err)
	}
}

func TestSLO(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 6, Run: "r", Convs: 30, MaxTurns: 4, ITL: true, FailEvery: 25})
	p := writeTemp(t, "s.jsonl", statstest.JSONL(t, recs))
	for _, tc := range []struct {
		slo  string
		met  bool
		good func(r *record.Record) bool
	}{
		{"ttft_p50<=10s,itl_p99<=1s", true, func(r *record.Record) bool { return r.OK() }},
		{"ttft_p90<=100ms", false, func(r *record.Record) bool { return r.OK() && *r.TTFTNs <= 100e6 }},
		{"turn0:ttft_p99<200ms", false, func(r *record.Record) bool { return r.OK() && (r.Turn != 0 || *r.TTFTNs < 200e6) }},
		{"latency_mean<=60s,lateness_max<=10ms", true, func(r *record.Record) bool { return r.OK() }},
	} {
		t.Run(tc.slo, func(t *testing.T) {
			t.Parallel()
			m, _ := runJSON(t, Options{Inputs: []string{p}, SLO: tc.slo})
			if get(m, "slo", "met") != tc.met {
				t.Errorf("met = %v, want %v: %v", get(m, "slo", "met"), tc.met, m["slo"])
			}
			good, convBad := 0, map[string]bool{}
			for i := range recs {
				r := &recs[i]
				if r.Retried {
					continue
				}
				convBad[r.ConversationID] = convBad[r.ConversationID] || !tc.good(r)
				if tc.good(r) {
					good++
				}
			}
			goodConv := 0
			for _, bad := range convBad {
				if !bad {
					goodConv++
				}
			}
			if get(m, "slo", "good_requests") != float64(good) || get(m, "slo", "good_conversations") != float64(goodConv) {
				t.Errorf("good %v/%v, want %d/%d", get(m, "slo", "good_requests"), get(m, "slo", "good_conversations"), good, goodConv)
			}
			err := Run(context.Background(), Options{Inputs: []string{p}, SLO: tc.slo, Check: true, Out: io.Discard, Err: io.Discard})
			if tc.met != (err == nil) || (!tc.met && !errors.Is(err, ErrCheckFailed)) {
				t.Errorf("--check: %v", err)
			}
		})
	}
}

func TestRecordsAndTo(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 9, Run: "r", Convs: 10, MaxTurns: 4, Warmup: 2})
	p := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Inputs: []string{p}, Records: true, Where: "turn>0", Out: &out, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var want []record.Record
	for _, r := range recs {
		if r.Turn > 0 {
			want = append(want, r)
		}
	}
	if !bytes.Equal(out.Bytes(), statstest.JSONL(t, want)) {
		t.Error("--records --where: output differs")
	}
	// JSONL → Parquet → JSONL is lossless.
	pq := filepath.Join(t.TempDir(), "r.parquet")
	if err := Run(context.Background(), Options{Inputs: []string{p}, To: pq, Out: io.Discard, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Run(context.Background(), Options{Inputs: []string{pq}, Records: true, Out: &out, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), statstest.JSONL(t, recs)) {
		t.Error("parquet round trip differs")
	}
}

// TestInterrupt reads a live pipe and stops on the second interrupt: the
// summary of what was read is printed.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 10, Run: "r", Convs: 5, MaxTurns: 2})
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write(statstest.JSONL(t, recs))
	ctx, cancel := context.WithCancel(context.Background())
	stop := make(chan struct{})
	var out, errb clitest.Buffer
	done := make(chan error)
	go func() {
		done <- Run(ctx, Options{Stdin: pr, Out: &out, Err: &errb, Format: report.FormatJSON, Stop: stop, Every: 20 * time.Millisecond})
	}()
	// Wait until the rolling view shows every record, then interrupt twice.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"records": `+itoa(len(recs))) {
		if time.Now().After(deadline) {
			t.Fatalf("rolling view never showed all records: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The second interrupt only after Run has taken the first.
	close(stop)
	for !strings.Contains(errb.String(), "interrupted: reading to the end") {
		if time.Now().After(deadline) {
			t.Fatalf("first interrupt not taken: stderr %q", errb.String())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("stderr %q", errb.String())
	}
	reports := strings.Split(strings.TrimSpace(out.String()), "\n}\n")
	// Issue 23: the live reports said "interrupted" before anything was.
	if first := reports[0]; !strings.Contains(first, `"partial": false`) || !strings.Contains(first, `"live": true`) {
		t.Errorf("first (live) report: %s", first[:min(len(first), 300)])
	}
	last := reports[len(reports)-1]
	if !strings.Contains(last, `"partial": true`) || !strings.Contains(last, `"requests": `+itoa(len(recs))) {
		t.Errorf("last report: %s", last)
	}
}

func TestHTMLAndXLSX(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 11, Run: "r", Convs: 40, MaxTurns: 5, ITL: true, FailEvery: 30})
	dir := t.TempDir()
	p := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	html, xlsx := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xlsx")
	m, _ := runJSON(t, Options{Inputs: []string{p}, HTML: html, XLSX: xlsx})
	checkHTML(t, html)
	checkXLSX(t, xlsx, m, len(recs))
}

// TestCompareSLO: --compare --slo judges each input on its own requests,
// in JSON, text and HTML, and --check fails when one input misses (issue
// 23: one verdict over the pooled inputs, no slo in groups[*]).
func TestCompareSLO(t *testing.T) {
	t.Parallel()
	a := statstest.Records(statstest.Config{Seed: 3, Run: "a", Convs: 30, MaxTurns: 4, ITL: true})
	b := statstest.Records(statstest.Config{Seed: 4, Run: "b", Convs: 20, MaxTurns: 6, ITL: true})
	for _, r := range b { // b is slow: every TTFT 10 s
		if r.TTFTNs != nil {
			*r.TTFTNs = 10e9
		}
	}
	pa, pb := writeTemp(t, "a.jsonl", statstest.JSONL(t, a)), writeTemp(t, "b.jsonl", statstest.JSONL(t, b))
	html := filepath.Join(t.TempDir(), "c.html")
	o := Options{Inputs: []string{"before=" + pa, "after=" + pb}, Compare: true, SLO: "ttft_p95<=5s", HTML: html}
	m, _ := runJSON(t, o)
	if m["slo"] != nil {
		t.Errorf("a pooled slo under --compare: %v", m["slo"])
	}
	groups := m["groups"].([]any)
	for i, want := range []bool{true, false} {
		g := groups[i].(map[string]any)
		slo, _ := g["slo"].(map[string]any)
		if slo == nil || slo["met"] != want || slo["requests"] != g["requests"] || g["goodput"] == nil {
			t.Errorf("group %v: slo %v, want met %v over its own %v requests, and goodput", g["key"], slo, want, g["requests"])
		}
	}
	page, _ := os.ReadFile(html)
	if n := strings.Count(string(page), "SLO; goodput"); n != 2 {
		t.Errorf("HTML has %d SLO cards, want one per input", n)
	}
	var out, errb bytes.Buffer
	o.Out, o.Err, o.HTML, o.Check = &out, &errb, "", true
	if err := Run(context.Background(), o); !errors.Is(err, ErrCheckFailed) {
		t.Errorf("--check with one input missing: %v", err)
	}
	for _, want := range []string{"SLO of before: met", "SLO of after: NOT MET"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestReasoning: records of a reasoning model get the time to the first
// content token beside TTFT, and their reasoning tokens and chunks, in
// the summary, per turn and in the HTML; an SLO can use either TTFT
// (issue 23: TTFT 28 ms was the first reasoning token, and the 237 ms to
// visible text was not shown).
func TestReasoning(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 5, Run: "r", Convs: 10, MaxTurns: 3, ITL: true})
	for i := range recs {
		r := &recs[i]
		if r.TTFTNs == nil {
			continue
		}
		*r.TTFTNs = 28e6
		r.TTFTContentNs = record.Ptr(int64(237e6))
		r.ReasoningTokens, r.ReasoningChunks = record.Ptr(int64(40)), 40
	}
	p := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	html := filepath.Join(t.TempDir(), "r.html")
	m, _ := runJSON(t, Options{Inputs: []string{p}, HTML: html, SLO: "ttft_p95<=100ms,ttft_content_p95<=100ms"})
	metrics := get(m, "summary", "metrics").(map[string]any)
	for name, want := range map[string]float64{"ttft_ms": 28, "ttft_content_ms": 237, "reasoning_num_tokens": 40, "reasoning_num_chunks": 40} {
		d, _ := metrics[name].(map[string]any)
		if d == nil || d["p50"] != want {
			t.Errorf("summary %s = %v, want p50 %g", name, d, want)
		}
	}
	objs := get(m, "slo", "objectives").([]any)
	if len(objs) != 2 || objs[0].(map[string]any)["met"] != true || objs[1].(map[string]any)["met"] != false {
		t.Errorf("ttft met (28 ms), ttft_content missed (237 ms): %v", objs)
	}
	if page, _ := os.ReadFile(html); !strings.Contains(string(page), "first content token p50 / p99 (ms)") {
		t.Error("HTML has no first-content-token card")
	}
	by, _ := runJSON(t, Options{Inputs: []string{p}, By: "turn", ByDetail: "full"})
	for _, g := range by["groups"].([]any) {
		if _, ok := g.(map[string]any)["metrics"].(map[string]any)["ttft_content_ms"]; !ok {
			t.Errorf("turn %v has no ttft_content_ms", g.(map[string]any)["key"])
		}
	}
}

// TestVerifyOutput: records of mtrun --verify-output are counted, with
// the first mismatching (conversation, turn), in JSON and text (issue 23:
// all 90 requests mismatched and the report did not say so).
func TestVerifyOutput(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 6, Run: "r", Convs: 8, MaxTurns: 3})
	var first *record.Record
	compared, mismatched := 0, 0
	for i := range recs {
		r := &recs[i]
		if !r.OK() || r.Retried || r.Phase == record.PhaseWarmup {
			continue
		}
		compared++
		r.VerifyMismatch = record.Ptr(i%2 == 1)
		if i%2 == 1 {
			mismatched++
			if first == nil || r.Start.Before(first.Start) {
				first = r
			}
		}
	}
	p := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	m, _ := runJSON(t, Options{Inputs: []string{p}})
	v, _ := get(m, "summary", "verify_output").(map[string]any)
	f, _ := v["first_mismatch"].(map[string]any)
	if v == nil || v["compared"] != float64(compared) || v["mismatched"] != float64(mismatched) ||
		f["conversation_id"] != first.ConversationID || f["turn"] != float64(first.Turn) {
		t.Errorf("verify_output %v, want %d compared, %d mismatched, first %s/%d", v, compared, mismatched, first.ConversationID, first.Turn)
	}
	var out, errb bytes.Buffer
	if err := Run(context.Background(), Options{Inputs: []string{p}, Out: &out, Err: &errb}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("verify_output = %d of %d answers differ from the dataset's (first: conversation %s, user turn %d)", mismatched, compared, first.ConversationID, first.Turn)
	if !strings.Contains(out.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, out.String())
	}
}

// TestHTMLBinsAndScales: the per-second charts say their interval, and a
// percentage axis follows its data instead of always spanning 0-100 %
// (issue 23: KV-cache usage of 0-6 % drawn on a 0-100 % axis).
func TestHTMLBinsAndScales(t *testing.T) {
	t.Parallel()
	page := htmlOf(t, statstest.Config{Seed: 12, Run: "r", Convs: 20, MaxTurns: 3, ITL: true})
	seen := 0
	for _, c := range htmlCharts(t, page) {
		switch c.Title {
		case "Requests completed per second", "Output tokens per second", "TTFT over time", "End-to-end latency over time":
			seen++
			if !strings.Contains(c.Note, " s interval") {
				t.Errorf("%s: note %q does not give the interval", c.Title, c.Note)
			}
		}
	}
	if seen != 4 {
		t.Errorf("%d over-time charts, want 4", seen)
	}
	if strings.Contains(page, "c.percent ? [0, 100]") {
		t.Error("percentage axes are fixed at 0-100 %")
	}
}

// TestHTMLCompare: under --compare every chart has one line per input,
// drawn against seconds since each run's start, and the values of the
// percentile chart are each input's own quantiles; records with a backend
// add the affinity table.
func TestHTMLCompare(t *testing.T) {
	t.Parallel()
	a := statstest.Records(statstest.Config{Seed: 3, Run: "a", Convs: 30, MaxTurns: 4, ITL: true})
	b := statstest.Records(statstest.Config{Seed: 4, Run: "b", Convs: 20, MaxTurns: 6, ITL: true})
	for i := range b {
		b[i].Backend = "replica-" + itoa(i%3)
	}
	dir := t.TempDir()
	pa, pb := writeTemp(t, "a.jsonl", statstest.JSONL(t, a)), writeTemp(t, "b.jsonl", statstest.JSONL(t, b))
	html := filepath.Join(dir, "c.html")
	m, _ := runJSON(t, Options{Inputs: []string{"base=" + pa, "tuned=" + pb}, Compare: true, HTML: html})
	checkHTML(t, html)
	data, _ := os.ReadFile(html)
	page := string(data)
	for _, c := range htmlCharts(t, page) {
		if c.XLabel == "time" {
			t.Errorf("chart %q on the clock under --compare", c.Title)
		}
		labels := ""
		for _, s := range c.Series {
			labels += s.Label + ";"
		}
		if !strings.Contains(labels, "base") || !strings.Contains(labels, "tuned") {
			t.Errorf("chart %q series %s: want lines of both inputs", c.Title, labels)
		}
		if c.Title != "TTFT by percentile" {
			continue
		}
		groups := m["groups"].([]any)
		for i, s := range c.Series {
			p50 := groups[i].(map[string]any)["metrics"].(map[string]any)["ttft_ms"].(map[string]any)["p50"].(float64)
			for k, p := range c.X {
				if p == 50 && (s.Y[k] == nil || math.Abs(*s.Y[k]-p50) > 1e-9*p50) {
					t.Errorf("%s: TTFT at the 50th percentile %v, the report's p50 %g", s.Label, s.Y[k], p50)
				}
			}
		}
	}
	if !strings.Contains(page, "Session affinity") {
		t.Error("no affinity table for records with a backend")
	}
}

// TestNoRetention: --no-retention drops cache_retention (with --compare,
// cache_retention_by_input) and leaves the rest of the report as it was.
func TestNoRetention(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 5, Run: "r", Convs: 20, MaxTurns: 6})
	in := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	for _, tc := range []struct {
		name string
		o    Options
		key  string
	}{
		{"summary", Options{Inputs: []string{in}}, "cache_retention"},
		{"compare", Options{Inputs: []string{"a=" + in, "b=" + in}, Compare: true}, "cache_retention_by_input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			with, _ := runJSON(t, tc.o)
			tc.o.NoRetention = true
			without, _ := runJSON(t, tc.o)
			if with[tc.key] == nil {
				t.Fatalf("%s missing without --no-retention", tc.key)
			}
			if v, ok := without[tc.key]; ok && v != nil {
				t.Errorf("%s = %v with --no-retention", tc.key, v)
			}
			delete(with, tc.key)
			delete(without, tc.key)
			if !jsonEqual(with, without) {
				t.Error("the reports differ in more than the retention analysis")
			}
		})
	}
}
