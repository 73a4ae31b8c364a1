package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	one := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		// pandas: pd.Series(range(1, 11)).quantile(p)
		{one, 0.1, 1.9}, {one, 0.25, 3.25}, {one, 0.5, 5.5}, {one, 0.75, 7.75},
		{one, 0.9, 9.1}, {one, 0.99, 9.91}, {one, 0, 1}, {one, 1, 10},
		// R: quantile(c(1,3,5,7,11,13,17), 0.3, type=7) = 4.6
		{[]float64{1, 3, 5, 7, 11, 13, 17}, 0.3, 4.6},
		{[]float64{0, 10}, 0.333, 3.33},
		{[]float64{42}, 0.99, 42},
	} {
		if got := Quantile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Quantile(%v, %g) = %g, want %g", tc.xs, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty: want NaN")
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	// pandas: pd.Series([10, 1, 4, 3, 2]).describe()
	d := Describe([]float64{10, 1, 4, 3, 2})
	want := Description{Count: 5, Mean: 4, Std: math.Sqrt(12.5), Min: 1, P25: 2, P50: 3, P75: 4, P90: 7.6, P99: 9.76, Max: 10}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"mean", d.Mean, want.Mean}, {"std", d.Std, want.Std}, {"min", d.Min, want.Min},
		{"p25", d.P25, want.P25}, {"p50", d.P50, want.P50}, {"p75", d.P75, want.P75},
		{"p90", d.P90, want.P90}, {"p99", d.P99, want.P99}, {"max", d.Max, want.Max},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if d.HasP999 {
		t.Error("p99.9 with 5 samples")
	}
	if one := Describe([]float64{3}); !math.IsNaN(one.Std) || one.Mean != 3 {
		t.Errorf("one sample: %+v", one)
	}
	big := make([]float64, 10000)
	for i := range big {
		big[i] = float64(i + 1)
	}
	db := Describe(big)
	// h = 9999 * 0.999 = 9989.001 → 9990 + 0.001; h = 9999*0.9999 = 9998.0001
	if !db.HasP999 || !db.HasP9999 || math.Abs(db.P999-9990.001) > 1e-6 || math.Abs(db.P9999-9999.0001) > 1e-6 {
		t.Errorf("tail percentiles: %v %v %v %v", db.HasP999, db.P999, db.HasP9999, db.P9999)
	}
	// Large offset: the two-pass standard deviation stays accurate.
	off := Describe([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3})
	if math.Abs(off.Std-1) > 1e-9 {
		t.Errorf("std with offset = %g, want 1", off.Std)
	}
}

// runJSON runs mtstats with --format json over files and decodes the
// report into a generic map.
func runJSON(t *testing.T, o Options) (map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	o.Out, o.Err, o.Format = &out, &errb, FormatJSON
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
	recs := genRecords(genConfig{seed: 1, run: "r1", convs: 60, maxTurns: 6, warmup: 5, failEvery: 17, itl: true})
	p := writeTemp(t, "r.jsonl", jsonl(t, recs))
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
	a := genRecords(genConfig{seed: 2, run: "r", shard: 0, convs: 20, maxTurns: 4})
	b := genRecords(genConfig{seed: 3, run: "r", shard: 1, convs: 15, maxTurns: 4})
	pa := writeTemp(t, "a.jsonl", jsonl(t, a))
	pb := writeTemp(t, "b.parquet", parquetBytes(t, b))
	both := writeTemp(t, "both.jsonl", append(jsonl(t, a), jsonl(t, b)...))
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
	recs := genRecords(genConfig{seed: 4, run: "r", convs: 5, maxTurns: 3, noCache: true})
	m, _ := runJSON(t, Options{Inputs: []string{writeTemp(t, "n.jsonl", jsonl(t, recs))}, By: "turn"})
	if v, ok := get(m, "summary").(map[string]any)["cache_hit_rate"]; !ok || v != nil {
		t.Errorf("cache_hit_rate = %v, want null", v)
	}
	recs = genRecords(genConfig{seed: 4, run: "r", convs: 5, maxTurns: 3})
	var cached, prompt int64
	for _, r := range recs {
		cached += *r.CachedTokens
		prompt += *r.PromptTokens
	}
	m, _ = runJSON(t, Options{Inputs: []string{writeTemp(t, "c.jsonl", jsonl(t, recs))}})
	if v := get(m, "summary", "cache_hit_rate"); v != float64(cached)/float64(prompt) {
		t.Errorf("cache_hit_rate = %v, want %v", v, float64(cached)/float64(prompt))
	}
}

func TestMalformedAndStrict(t *testing.T) {
	t.Parallel()
	good := jsonl(t, genRecords(genConfig{seed: 5, run: "r", convs: 3, maxTurns: 2}))
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
	recs := genRecords(genConfig{seed: 6, run: "r", convs: 30, maxTurns: 4, itl: true, failEvery: 25})
	p := writeTemp(t, "s.jsonl", jsonl(t, recs))
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

func TestParseSLOErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ttft<=2s", "foo_p95<=2s", "ttft_p95>=2s", "ttft_p101<=1s", "ttft_p95<=soon", "ttft_p95<=500", "e2e_p95<3000"} {
		if _, err := ParseSLO(s); err == nil {
			t.Errorf("ParseSLO(%q): no error", s)
		}
	}
	objs, err := ParseSLO("turn2:itl_p99.9<=50ms, e2e_p95<3s")
	if err != nil || len(objs) != 2 || objs[0].Turn != 2 || objs[0].Metric != ITL || math.Abs(objs[0].P-0.999) > 1e-12 ||
		objs[0].Limit != 50 || objs[1].Metric != Latency || !objs[1].Strict || objs[1].Limit != 3000 {
		t.Errorf("ParseSLO: %+v, %v", objs, err)
	}
}

// matchCase is an expression and whether it matches a record.
type matchCase struct {
	expr string
	want bool
}

// checkMatch checks each expression against r.
func checkMatch(t *testing.T, r *record.Record, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		f, err := ParseFilter(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := f.Match(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	r := &genRecords(genConfig{seed: 7, run: "r", convs: 1, maxTurns: 1})[0]
	r.Turn, r.CachedTokens = 2, nil
	checkMatch(t, r, []matchCase{
		{"turn>0", true}, {"turn>=3", false}, {"turn==2 && phase==measure", true},
		{`error_class==""`, true}, {"error_class!=timeout", true}, {"cached_tokens==null", true},
		{"cached_tokens>0", false}, {"retried==false", true}, {"ttft_ns<1h", true},
		{"conversation_id=conv-000", true}, {"start>2026-05-04", true}, {"itl_ns==0", true},
	})
	for _, bad := range []string{"turn", "nosuch>1", ">1"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestFilterTyped checks that times compare as instants, durations by
// their value with units, numbers as numbers, and that expressions that
// do not parse are errors naming the problem.
func TestFilterTyped(t *testing.T) {
	t.Parallel()
	r := &genRecords(genConfig{seed: 7, run: "r", convs: 1, maxTurns: 1})[0]
	r.Start = time.Date(2026, 11, 23, 18, 21, 8, 500_000_000, time.UTC)
	r.TTFTNs = record.Ptr(int64(600 * time.Millisecond))
	r.Turn, r.Status, r.CachedTokens = 10, 200, nil
	checkMatch(t, r, []matchCase{
		// As strings, "…08.5Z" < "…08Z" and "…T18…" > "…T17…-02:00".
		{"start>=2026-11-23T18:21:08Z", true},
		{"start<2026-11-23T18:21:08Z", false},
		{"start>2026-11-23T17:00:00-02:00", false},
		{"start<2026-11-23T17:00:00-02:00", true},
		{"start==2026-11-23T19:21:08.5+01:00", true},
		{`start=="2026-11-23T18:21:08.500Z"`, true},
		{"start>2026-11-23", true}, {"start<2026-11-24", true},
		{"ttft>500ms", true}, {"ttft>1s", false}, {"ttft == 600ms", true}, {"ttft<0.7s", true},
		{"ttft_ns>500ms", true}, {"ttft_ns>599999999", true}, {"ttft_ns>6e8", false},
		// As strings, "10" < "9".
		{"turn>9", true}, {"turn<9", false}, {"status>=2e2", true},
		{"turn>1&&turn<11", true}, {"turn>1 &&status==404", false},
		{"cached_tokens==null", true}, {"cached_tokens!=null", false},
		{`error_class=="" && phase != warmup`, true},
	})
	for _, tc := range []struct{ expr, want string }{
		{"turn>>1", `turn >: value ">1" starts with an operator`},
		{"turn>1 && ", "want a field name, got \"end of expression\""},
		{"turn>1 || turn<0", "want && or the end after a comparison"},
		{"turn>one", `turn: "one" is not a number`},
		{"turn>", "turn >: missing value"},
		{"turn 1", "after turn: want an operator"},
		{"start>=yesterday", `start: "yesterday" is not an RFC 3339 time`},
		{"start>2026-11-23T18:21:08", "is not an RFC 3339 time"},
		{"ttft>500", `ttft: "500" is not a duration with unit`},
		{"ttft_ns>fast", "is neither a duration with unit"},
		{"retried==maybe", `retried: "maybe" is not true or false`},
		{"cached_tokens>null", "null compares only with == or !="},
		{`phase=="measure`, "unterminated or invalid quoted string"},
		{"turnx>1", `unknown field "turnx"`},
		{"client>1 junk", "want && or the end"},
	} {
		_, err := ParseFilter(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "where: ") {
			t.Errorf("%q: error %v, want one containing %q", tc.expr, err, tc.want)
		}
	}
}

// FuzzParseFilter checks that no expression panics the parser or matcher.
func FuzzParseFilter(f *testing.F) {
	r := &genRecords(genConfig{seed: 8, run: "r", convs: 1, maxTurns: 1})[0]
	for _, s := range []string{"turn>0", "a==b && turn<=3", `error_class==""`, "cached_tokens!=null",
		"turn>>1", "start>=2026-11-23T18:21:08Z", "ttft>500ms&&tpot_ns<1e6", `model=="a b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		switch {
		case err == nil:
			flt.Match(r)
		case !strings.HasPrefix(err.Error(), "where: "):
			t.Fatalf("%q: error without prefix: %v", s, err)
		}
		ParseSLO(s)
	})
}

func TestRecordsAndTo(t *testing.T) {
	t.Parallel()
	recs := genRecords(genConfig{seed: 9, run: "r", convs: 10, maxTurns: 4, warmup: 2})
	p := writeTemp(t, "r.jsonl", jsonl(t, recs))
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
	if !bytes.Equal(out.Bytes(), jsonl(t, want)) {
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
	if !bytes.Equal(out.Bytes(), jsonl(t, recs)) {
		t.Error("parquet round trip differs")
	}
}

// TestInterrupt reads a live pipe and stops on the second interrupt: the
// summary of what was read is printed.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	recs := genRecords(genConfig{seed: 10, run: "r", convs: 5, maxTurns: 2})
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write(jsonl(t, recs))
	ctx, cancel := context.WithCancel(context.Background())
	stop := make(chan struct{})
	var out, errb clitest.Buffer
	done := make(chan error)
	go func() {
		done <- Run(ctx, Options{Stdin: pr, Out: &out, Err: &errb, Format: FormatJSON, Stop: stop, Every: 20 * time.Millisecond})
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
	recs := genRecords(genConfig{seed: 11, run: "r", convs: 40, maxTurns: 5, itl: true, failEvery: 30})
	dir := t.TempDir()
	p := writeTemp(t, "r.jsonl", jsonl(t, recs))
	html, xlsx := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xlsx")
	m, _ := runJSON(t, Options{Inputs: []string{p}, HTML: html, XLSX: xlsx})
	checkHTML(t, html)
	checkXLSX(t, xlsx, m, len(recs))
}

// TestHTMLCompare: under --compare every chart has one line per input,
// drawn against seconds since each run's start, and the values of the
// percentile chart are each input's own quantiles; records with a backend
// add the affinity table.
func TestHTMLCompare(t *testing.T) {
	t.Parallel()
	a := genRecords(genConfig{seed: 3, run: "a", convs: 30, maxTurns: 4, itl: true})
	b := genRecords(genConfig{seed: 4, run: "b", convs: 20, maxTurns: 6, itl: true})
	for i := range b {
		b[i].Backend = "replica-" + itoa(i%3)
	}
	dir := t.TempDir()
	pa, pb := writeTemp(t, "a.jsonl", jsonl(t, a)), writeTemp(t, "b.jsonl", jsonl(t, b))
	html := filepath.Join(dir, "c.html")
	m, _ := runJSON(t, Options{Inputs: []string{"base=" + pa, "tuned=" + pb}, Compare: true, HTML: html})
	checkHTML(t, html)
	data, _ := os.ReadFile(html)
	page := string(data)
	for _, c := range htmlCharts(t, page) {
		if c.Time {
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

func TestSampleSet(t *testing.T) {
	t.Parallel()
	var s sampleSet
	var want []float64
	for i := range 3*blockMax + 17 {
		x := int64((i * 7919) % 1000)
		s.add(x)
		want = append(want, float64(x))
		if i == blockMax+5 {
			if got := s.values(); !slices.Equal(got, want) {
				t.Fatal("values after two blocks differ")
			}
		}
	}
	if s.Len() != len(want) || !slices.Equal(s.values(), want) || s.wide {
		t.Fatalf("len %d, wide %v", s.Len(), s.wide)
	}
	d := s.describe()
	if d.Count != len(want) || d.Max != 999 || d.Min != 0 {
		t.Fatalf("describe: count %d, min %v, max %v", d.Count, d.Min, d.Max)
	}
	sorted := slices.Sorted(slices.Values(want))
	if q, w := d.Quantile(0.3), Quantile(sorted, 0.3); q != w || len(s.b32) != 1 {
		t.Fatalf("Q(0.3) = %v, want %v (%d blocks after the sort)", q, w, len(s.b32))
	}
}

// TestSampleSetWiden: samples are int32 until one does not fit, then
// int64, in order, none lost; the scale turns ns into ms.
func TestSampleSetWiden(t *testing.T) {
	t.Parallel()
	s := sampleSet{scale: 1e6}
	for i := range 1000 {
		s.add(int64(i) * 1e6)
	}
	if s.wide || s.Len() != 1000 {
		t.Fatal("int32 samples widened the set")
	}
	s.add(math.MaxInt32)
	if s.wide {
		t.Fatal("MaxInt32 widened the set")
	}
	s.add(math.MaxInt32 + 1) // does not fit: widens
	s.add(-5e6)
	got := s.values()
	if !s.wide || len(got) != 1003 || got[999] != 999 || got[1000] != math.MaxInt32/1e6 || got[1001] != (math.MaxInt32+1)/1e6 || got[1002] != -5 {
		t.Fatalf("wide=%v len=%d tail=%v", s.wide, len(got), got[998:])
	}
	d := s.describe()
	if d.Min != -5 || d.Max != (math.MaxInt32+1)/1e6 || d.P50 != 500 {
		t.Fatalf("min %v max %v p50 %v", d.Min, d.Max, d.P50)
	}
}

// TestHTMLServerCharts: the server's metrics are drawn on the clock, one
// line per replica, each point at its scrape time.
func TestHTMLServerCharts(t *testing.T) {
	t.Parallel()
	srv := &Server{WindowStart: "2026-11-23T10:00:00Z", Replicas: []ReplicaReport{
		{Replica: 0, Timeline: []TimelinePoint{{T: 0, Running: 1, Waiting: 0, KVUsage: 0.1, HitRate: 0.5, TTFTMs: 20}, {T: 1, Running: 3, Waiting: 2, KVUsage: 0.2, HitRate: 0.75, TTFTMs: 40}}},
		{Replica: 1, Timeline: []TimelinePoint{{T: 0.5, Running: 2, Waiting: 1, KVUsage: 0.3, HitRate: Num(math.NaN()), TTFTMs: 30}}},
	}}
	charts := serverCharts(srv)
	if len(charts) != 4 {
		t.Fatalf("%d server charts, want 4", len(charts))
	}
	t0 := float64(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).Unix())
	if want := []float64{t0, t0 + 0.5, t0 + 1}; !slices.Equal(charts[0].X, want) || !charts[0].Time {
		t.Errorf("x %v, want %v on the clock", charts[0].X, want)
	}
	queue := charts[0]
	if len(queue.Series) != 4 || queue.Series[0].Label != "replica 0 running" || *queue.Series[0].Y[2] != 3 || queue.Series[0].Y[1] != nil {
		t.Errorf("running/waiting series %+v", queue.Series)
	}
	hit := charts[2]
	if *hit.Series[0].Y[2] != 75 || hit.Series[1].Y[1] != nil {
		t.Errorf("hit-rate series: replica 0 %v, replica 1 %v (NaN must be a gap)", hit.Series[0].Y, hit.Series[1].Y)
	}
	if serverCharts(nil) != nil {
		t.Error("charts without server metrics")
	}
}

// TestSampleSetAddAll: adding a list at once is adding each sample, over
// block boundaries and through widening.
func TestSampleSetAddAll(t *testing.T) {
	t.Parallel()
	var one, all sampleSet
	var xs []int64
	for i := range 3*blockMax + 100 {
		x := int64(i % 5000)
		if i == 2*blockMax+7 {
			x = math.MaxInt32 + 9 // widens mid-list
		}
		xs = append(xs, x)
	}
	for _, part := range [][]int64{xs[:10], xs[10 : blockMax+3], xs[blockMax+3 : 2*blockMax+50], xs[2*blockMax+50:]} {
		all.addAll(part)
		for _, x := range part {
			one.add(x)
		}
		if !slices.Equal(all.values(), one.values()) || all.Len() != one.Len() || all.wide != one.wide {
			t.Fatalf("after %d samples: addAll differs from add (wide %v/%v)", one.Len(), all.wide, one.wide)
		}
	}
	if !all.wide {
		t.Fatal("a sample beyond int32 did not widen the set")
	}
}
