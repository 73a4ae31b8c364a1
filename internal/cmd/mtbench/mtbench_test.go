package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/duckdbtest"
	"github.com/mtkit/mtkit/internal/mtstats"
	"github.com/mtkit/mtkit/internal/record"
)

func TestTokenStamp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		ev     string
		ns     int64
		ok     bool
		hasErr bool
	}{
		{"token", `data: {"choices":[{"index":0,"delta":{"content":" a"},"finish_reason":null}],"sim_sent_ns":1700000000123456789}` + "\n\n", 1700000000123456789, true, false},
		{"completions", `data: {"choices":[{"index":0,"text":"a"}],"sim_sent_ns":42}` + "\n\n", 42, true, false},
		{"role chunk", `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"sim_sent_ns":42}` + "\n\n", 0, false, false},
		{"usage chunk", `data: {"choices":[],"usage":{},"sim_sent_ns":42}` + "\n\n", 0, false, false},
		{"done", "data: [DONE]\n\n", 0, false, false},
		{"no digits", `data: {"choices":[{"text":"a"}],"sim_sent_ns":x}`, 0, true, true},
		{"overflow", `data: {"choices":[{"text":"a"}],"sim_sent_ns":99999999999999999999}`, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns, ok, err := tokenStamp([]byte(tc.ev))
			if ns != tc.ns || ok != tc.ok || (err != nil) != tc.hasErr {
				t.Errorf("tokenStamp = %d, %v, %v; want %d, %v, error %v", ns, ok, err, tc.ns, tc.ok, tc.hasErr)
			}
		})
	}
}

func FuzzTokenStamp(f *testing.F) {
	f.Add([]byte(`data: {"choices":[{"text":"a"}],"sim_sent_ns":42}`))
	f.Add([]byte(`data: "sim_sent_ns":`))
	f.Fuzz(func(t *testing.T, ev []byte) {
		ns, ok, err := tokenStamp(ev)
		if !ok && (ns != 0 || err != nil) {
			t.Fatalf("not a token chunk but ns=%d err=%v", ns, err)
		}
		if ok && err == nil && ns < 0 {
			t.Fatalf("negative stamp %d", ns)
		}
	})
}

func TestMedianAndTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is not NaN")
	}
	if !atLeast(5).met(5) || atLeast(5).met(4.9) || !atMost(1).met(1) || atMost(1).met(1.01) || atMost(1).met(math.NaN()) {
		t.Error("target bounds wrong")
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	fs := newFigures()
	fs.add("capacity", "turns/s", "turns/s", atLeast(5000), 6000)
	fs.add("capacity", "turns/s", "turns/s", atLeast(5000), 4000)
	fs.add("capacity", "turns/s", "turns/s", atLeast(5000), 5500)
	fs.add("capacity", "cpu", "µs", atMost(3), 3.5)
	fs.na("tools", "mtgen", "tokens/s", atLeast(1e6), "tool missing")
	fs.add("scale", "goroutines", "", nil, 21400)
	rep := fs.report(true)
	if rep.Checked != 3 || rep.Failed != 1 {
		t.Fatalf("checked %d failed %d, want 3 and 1", rep.Checked, rep.Failed)
	}
	want := []string{"PASS", "FAIL", "n/a", "-"}
	for i, r := range rep.Rows {
		if r.Result != want[i] {
			t.Errorf("row %d %s: %s, want %s", i, r.Figure, r.Result, want[i])
		}
	}
	if *rep.Rows[0].Median != 5500 {
		t.Errorf("median %v, want 5500", *rep.Rows[0].Median)
	}
	var buf bytes.Buffer
	rep.text(&buf)
	for _, s := range []string{"5,500", "4,000 … 6,000", ">= 5,000", "n/a (tool missing)", "21,400"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
	if smoke := fs.report(false); smoke.Failed != 0 {
		t.Errorf("smoke report counts %d failures", smoke.Failed)
	}
}

func TestFormatValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		want string
	}{{1234567, "1,234,567"}, {-2500, "-2,500"}, {250, "250"}, {12.34, "12.3"}, {1.234, "1.23"}, {0.0456, "0.046"}, {0, "0.00"}} {
		if got := formatValue(tc.v, ""); got != tc.want {
			t.Errorf("formatValue(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestMatchStamps(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(100, 0)
	rec := func(id string, start time.Time, ttft int64, itl []int64, phase string) *record.Record {
		return &record.Record{ConversationID: id, Start: start, TTFTNs: &ttft, ITLNs: itl, Chunks: len(itl) + 1, Phase: phase}
	}
	recs := []*record.Record{
		rec("a", t0.Add(time.Second), 20_300_000, []int64{10_000_000, 10_100_000}, record.PhaseMeasure),
		rec("a", t0, 1, []int64{1, 1}, record.PhaseWarmup),
		rec("b", t0, 5, []int64{1}, record.PhaseMeasure), // server saw 3 chunks: unmatched
	}
	srv := map[string][]*served{
		"a": {{recv: 0, stamps: []int64{0, 1, 2}}, {recv: 1000, stamps: []int64{20_001_000, 30_001_000, 40_001_000}}},
		"b": {{recv: 0, stamps: []int64{1, 2, 3}}},
	}
	m := matchStamps(recs, srv, fidTTFT, fidDecode)
	if m.requests != 1 || m.unmatched != 1 {
		t.Fatalf("requests %d unmatched %d, want 1 and 1", m.requests, m.unmatched)
	}
	if len(m.ttft) != 1 || math.Abs(m.ttft[0]-0.3) > 1e-9 {
		t.Errorf("ttft errors %v, want [0.3]", m.ttft)
	}
	if len(m.itl) != 2 || m.itl[0] != 0 || math.Abs(m.itl[1]-0.1) > 1e-9 {
		t.Errorf("itl errors %v, want [0 0.1]", m.itl)
	}
}

// genAll returns the records genRecords writes for s.
func genAll(t *testing.T, s recordSpec) []record.Record {
	t.Helper()
	var out []record.Record
	err := genRecords(s, func(r *record.Record) error {
		c := *r
		c.ITLNs = slices.Clone(r.ITLNs)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenRecordsLookLikeARun(t *testing.T) {
	t.Parallel()
	const n = 6000
	recs := genAll(t, recordSpec{n: n, seed: 7})
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	var warm, failed, retried, ok, gaps int
	type turnKey struct {
		conv string
		turn int
	}
	attempts := map[turnKey]int{}
	lastRetried := map[turnKey]bool{}
	warmDone := false
	for i, r := range recs {
		if r.Seq != int64(i) {
			t.Fatalf("record %d: seq %d", i, r.Seq)
		}
		if got := r.End.Sub(r.Start).Nanoseconds(); got != r.LatencyNs {
			t.Fatalf("record %d: end-start %d, latency_ns %d", i, got, r.LatencyNs)
		}
		k := turnKey{r.ConversationID, r.Turn}
		if r.Attempt != attempts[k] {
			t.Fatalf("record %d (%v): attempt %d, want %d", i, k, r.Attempt, attempts[k])
		}
		if r.Attempt > 0 && !lastRetried[k] {
			t.Fatalf("record %d: attempt %d after an attempt that was not retried", i, r.Attempt)
		}
		attempts[k]++
		lastRetried[k] = r.Retried
		switch {
		case r.Phase == record.PhaseWarmup:
			warm++
			if warmDone && r.Attempt == 0 {
				t.Fatalf("record %d: warmup request after a measured one", i)
			}
		case r.Attempt == 0:
			warmDone = true
		}
		if r.Retried {
			retried++
			if r.OK() || !retryable(r.ErrorClass) || r.Attempt >= 3 {
				t.Fatalf("record %d: retried with class %q at attempt %d", i, r.ErrorClass, r.Attempt)
			}
		}
		if !r.OK() {
			failed++
			if r.Error == "" {
				t.Fatalf("record %d: class %q without an error message", i, r.ErrorClass)
			}
			continue
		}
		ok++
		gaps += len(r.ITLNs)
		if r.CompletionTokens == nil || int64(len(r.ITLNs)) != *r.CompletionTokens-1 || r.Chunks != int(*r.CompletionTokens) {
			t.Fatalf("record %d: %d ITL gaps, %d chunks, completion tokens %v: want one gap per token after the first", i, len(r.ITLNs), r.Chunks, r.CompletionTokens)
		}
		if r.TTFTNs == nil || *r.TTFTNs+sum(r.ITLNs) > r.LatencyNs || r.CachedTokens == nil || *r.CachedTokens > *r.PromptTokens {
			t.Fatalf("record %d: inconsistent timings or tokens: %+v", i, r)
		}
	}
	if want := n / 100; warm < want || warm > want+10 {
		t.Errorf("%d warmup records, want about %d", warm, want)
	}
	if f := float64(failed) / n; f < 0.015 || f > 0.06 {
		t.Errorf("%.3f of attempts failed, want about 0.03", f)
	}
	if retried == 0 || retried >= failed {
		t.Errorf("%d retried of %d failed attempts: want some requests to fail for good", retried, failed)
	}
	if g := float64(gaps) / float64(ok); g < 30 || g > 120 {
		t.Errorf("%.1f ITL gaps per successful request, want 30-120", g)
	}
	if again := genAll(t, recordSpec{n: 100, warmup: n / 100, seed: 7}); !reflect.DeepEqual(again, recs[:100]) {
		t.Error("the same seed gave different records")
	}
}

func TestAgree(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		mt, db map[string]float64
		sl     slack
		n      int
		bad    string // substring of the error; "" = agree
	}{
		{"equal", map[string]float64{"a": 1, "b": 0}, map[string]float64{"a": 1, "b": 0}, nil, 2, ""},
		{"within 1e-9", map[string]float64{"a": 1e6}, map[string]float64{"a": 1e6 * (1 + 5e-10)}, nil, 1, ""},
		{"beyond 1e-9", map[string]float64{"a": 1e6}, map[string]float64{"a": 1e6 * (1 + 2e-9)}, nil, 1, "a: mtstats"},
		{"both NaN", map[string]float64{"a": nan}, map[string]float64{"a": nan}, nil, 1, ""},
		{"NaN against a number", map[string]float64{"a": nan}, map[string]float64{"a": 0}, nil, 1, "a: mtstats NaN"},
		{"only mtstats", map[string]float64{"a": 1, "b": 2}, map[string]float64{"a": 1}, nil, 2, "b: only mtstats"},
		{"only DuckDB", map[string]float64{"a": 1}, map[string]float64{"a": 1, "c": 2}, nil, 2, "c: only DuckDB"},
		{"slack", map[string]float64{"t": 10}, map[string]float64{"t": 10 + 1e-6}, slack{"t": 2e-6}, 1, ""},
		{"beyond slack", map[string]float64{"t": 10}, map[string]float64{"t": 10 + 3e-6}, slack{"t": 2e-6}, 1, "t: mtstats"},
		{"nothing", map[string]float64{}, map[string]float64{}, nil, 0, "no numbers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, err := agree(tc.mt, tc.db, tc.sl)
			if n != tc.n {
				t.Errorf("compared %d, want %d", n, tc.n)
			}
			switch {
			case tc.bad == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
				t.Errorf("error %v, want one containing %q", err, tc.bad)
			}
		})
	}
}

func TestParseOutputs(t *testing.T) {
	t.Parallel()
	byTurn := `{"groups":[{"key":"0","metrics":{"ttft_ms":{"count":2,"p50":1.5,"p90":1.9,"p99":1.99}}},{"key":"7","metrics":{"ttft_ms":{"count":0,"p50":null}}}]}`
	mt, err := mtstatsByTurn([]byte(byTurn))
	if err != nil {
		t.Fatal(err)
	}
	db, err := duckByTurn([]byte(`[{"key":"0","count":"2","q":[1500000,1900000,1990000]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := agree(mt, db, nil); n != 4 || err != nil {
		t.Errorf("by turn: %d compared, %v", n, err)
	}
	for _, tc := range []struct {
		name string
		f    func([]byte) (map[string]float64, error)
		doc  string
		want string
	}{
		{"mtstats summary without metrics", mtstatsSummary, `{"summary":{"requests":1}}`, "no summary.cache_hit_rate, summary.cache_reported_requests, summary.failed, summary.input_tokens (and 115 more)"},
		{"mtstats summary not JSON", mtstatsSummary, `{`, "mtstats JSON"},
		{"by turn without groups", mtstatsByTurn, `{"summary":{}}`, "no groups"},
		{"by turn without ttft", mtstatsByTurn, `{"groups":[{"key":"1","metrics":{}}]}`, `group "1": no metrics.ttft_ms`},
		{"by turn p90 not a number", mtstatsByTurn, `{"groups":[{"key":"1","metrics":{"ttft_ms":{"count":3,"p50":1,"p90":"x","p99":1}}}]}`, "ttft_ms.p90 is not a number"},
		{"DuckDB two summary rows", duckSummary, `[{},{}]`, "2 rows, want 1"},
		{"DuckDB by turn short q", duckByTurn, `[{"key":1,"count":1,"q":[1]}]`, "want 3 quantiles"},
	} {
		if _, err := tc.f([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseOutputs(f *testing.F) {
	f.Add([]byte(`{"summary":{"requests":1,"metrics":{"ttft_ms":{"count":1}}}}`))
	f.Add([]byte(`{"groups":[{"key":"0","metrics":{"ttft_ms":{"count":2,"p50":1,"p90":2,"p99":3}}}]}`))
	f.Add([]byte(`[{"key":"0","count":"2","q":[1,2,3]}]`))
	f.Add([]byte(`[{"summary.ok":"12","summary.metrics.itl_ms.p50":null}]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, p := range []func([]byte) (map[string]float64, error){mtstatsSummary, mtstatsByTurn, duckSummary, duckByTurn} {
			if m, err := p(doc); err == nil && m == nil {
				t.Fatal("no error and no numbers")
			}
		}
		convertedCount(vllmWritten, string(doc), "fuzz")
		convertedCount(mtconvertWritten, string(doc), "fuzz")
	})
}

func TestConvertedCount(t *testing.T) {
	t.Parallel()
	mt := "records        20 read, 0 malformed\nconversations  1,234 after merging parts: 1,200 written, 34 dropped\n"
	if n, err := convertedCount(mtconvertWritten, mt, "mtconvert"); n != 1200 || err != nil {
		t.Errorf("mtconvert: %d, %v; want 1200", n, err)
	}
	v := "Statistics:\n...\nTotal conversations converted (after filtering): 33,552\n\nWriting file: x\n"
	if n, err := convertedCount(vllmWritten, v, "vLLM"); n != 33552 || err != nil {
		t.Errorf("vLLM: %d, %v; want 33552", n, err)
	}
	if _, err := convertedCount(vllmWritten, "Traceback ...", "vLLM"); err == nil || !strings.Contains(err.Error(), "Traceback") {
		t.Errorf("no count: error %v", err)
	}
}

func TestPatchVLLM(t *testing.T) {
	t.Parallel()
	src := "import json\nfrom transformers import AutoTokenizer  # type: ignore\n\ndef content_is_valid(c):\n    return has_non_english_chars(content)\n"
	got, err := patchVLLM(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"    return not has_non_english_chars(content)\n", "except ImportError:", "    AutoTokenizer = object"} {
		if !strings.Contains(got, want) {
			t.Errorf("patched source lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{
		strings.Replace(src, "    return has_non_english_chars(content)\n", "    return True\n", 1),
		src + "    return has_non_english_chars(content)\n",
	} {
		if _, err := patchVLLM(bad); err == nil || !strings.Contains(err.Error(), "ascii-fix") {
			t.Errorf("patchVLLM of a different file: error %v, want one naming ascii-fix", err)
		}
	}
}

// TestSQLAgreesWithStats runs the benchmark's SQL in DuckDB and mtstats'
// own code (internal/mtstats) on the same generated files: the check the
// benchmark makes on every run, here on a small file.
func TestSQLAgreesWithStats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := recordFiles{filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.parquet"), filepath.Join(dir, "n.parquet")}
	if err := writeRecordFiles(files, recordSpec{n: 1500, clients: 40, seed: 3}); err != nil {
		t.Fatal(err)
	}
	for _, q := range statsQuestions(files.jsonl, files.parquet, files.noITL) {
		t.Run(q.name, func(t *testing.T) {
			t.Parallel()
			rows := duckdbtest.Query(t, q.sql(duckSource(q.input)))
			dbDoc, err := json.Marshal(rows)
			if err != nil {
				t.Fatal(err)
			}
			var out, errs bytes.Buffer
			o := mtstats.Options{Inputs: []string{q.input}, Out: &out, Err: &errs, Format: "json", NoMetrics: true}
			for i := 0; i+1 < len(q.args); i += 2 {
				switch q.args[i] {
				case "--by":
					o.By = q.args[i+1]
				case "--only":
					o.Only = q.args[i+1]
				default:
					t.Fatalf("option %s: not passed to mtstats.Options", q.args[i])
				}
			}
			if err := mtstats.Run(context.Background(), o); err != nil {
				t.Fatalf("stats: %v: %s", err, errs.String())
			}
			mt, err := q.mt(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			db, err := q.db(dbDoc)
			if err != nil {
				t.Fatal(err)
			}
			n, err := agree(mt, db, q.slack)
			if err != nil {
				t.Fatal(err)
			}
			if n < 20 {
				t.Errorf("only %d numbers compared", n)
			}
		})
	}
}

// TestRecordFilesSameRecords reads back the JSONL file and the Parquet
// directory writeRecordFiles writes: both hold the generated records.
func TestRecordFilesSameRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := recordFiles{filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.parquet"), filepath.Join(dir, "n.parquet")}
	spec := recordSpec{n: 2000, clients: 30, seed: 5}
	if err := writeRecordFiles(files, spec); err != nil {
		t.Fatal(err)
	}
	lines := func(recs []*record.Record) []string {
		out := make([]string, len(recs))
		for i, r := range recs {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = string(b)
		}
		return out
	}
	var want []*record.Record
	for _, r := range genAll(t, spec) {
		want = append(want, &r)
	}
	for _, path := range []string{files.jsonl, files.parquet, files.noITL} {
		if path == files.noITL {
			for _, r := range want {
				r.ITLNs = nil
			}
		}
		f := &record.Files{Paths: []string{path}}
		var got []*record.Record
		for f.Scan() {
			if err := f.Err(); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			r := *f.Record()
			r.ITLNs = slices.Clone(r.ITLNs)
			got = append(got, &r)
		}
		if err := f.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		g, w := lines(got), lines(want)
		if len(g) != len(w) {
			t.Fatalf("%s: %d records, want %d", path, len(g), len(w))
		}
		for i := range g {
			if g[i] != w[i] {
				t.Fatalf("%s: record %d:\n got %s\nwant %s", path, i, g[i], w[i])
			}
		}
	}
}

// TestMain lets the test binary act as runProc's launcher, as mtbench
// does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == measureArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestRunProcOwnRSS: a child's max RSS is its own, not this process's
// (a child started directly by a Go process holding 300 MB reports 300 MB).
func TestRunProcOwnRSS(t *testing.T) {
	hold := make([]byte, 200<<20)
	for i := 0; i < len(hold); i += 4096 {
		hold[i] = 1
	}
	p, err := runProc(context.Background(), "/bin/true", nil, runOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxRSS > 60<<20 {
		t.Errorf("/bin/true: max RSS %d MB while the parent holds %d MB", p.MaxRSS>>20, len(hold)>>20)
	}
	if p.Wall <= 0 || p.ExitCode != 0 {
		t.Errorf("wall %v exit %d", p.Wall, p.ExitCode)
	}
}

func TestRunProcExitAndSignal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	p, err := runProc(context.Background(), "/bin/sh", []string{"-c", "echo hi; echo oops >&2; exit 3"}, runOpts{stdout: out})
	if err == nil || p == nil || p.ExitCode != 3 || !strings.Contains(err.Error(), "oops") {
		t.Fatalf("exit 3: proc %+v, error %v", p, err)
	}
	if b, _ := os.ReadFile(out); string(b) != "hi\n" {
		t.Errorf("stdout %q", b)
	}
	started := make(chan struct{})
	p, err = runProc(context.Background(), "/bin/sleep", []string{"30"}, runOpts{during: func(pr *os.Process) {
		close(started)
		pr.Signal(syscall.SIGTERM)
	}})
	<-started
	if err != nil || !p.Signalled || p.Wall > 20*time.Second {
		t.Errorf("signalled child: proc %+v, error %v", p, err)
	}
	if _, err := runProc(context.Background(), filepath.Join(dir, "missing"), nil, runOpts{}); err == nil {
		t.Error("a missing binary gave no error")
	}
}
