package mtstats

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// TestOnlySameNumbers: a report limited by --only has the request counts,
// runtime, request rate and selected metrics of the whole report (read
// with every column), number for number, and nothing else; summary and
// --by groups, from JSONL and Parquet.
func TestOnlySameNumbers(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 4, Run: "r", Convs: 80, MaxTurns: 5, Warmup: 4, FailEvery: 13, ITL: true})
	for i := range recs {
		recs[i].Model = []string{"a", "b", "c"}[i%3]
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"r.jsonl": statstest.JSONL(t, recs), "r.parquet": statstest.Parquet(t, recs)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var every []string
		for m := range stats.Metric(len(stats.MetricNames)) {
			every = append(every, stats.MetricName(m))
		}
		for _, o := range []Options{
			{Only: "ttft", By: "turn"},
			{Only: "itl_ms,latency"},
			{Only: strings.Join(every, ","), By: "client"},
			{Only: "tpot,input_num_tokens,output_num_tokens", By: "model", Where: "turn>0"},
			{Only: "lateness,intended_latency,think_planned,think_actual", By: "conversation", IncludeWarmup: true},
			{Only: "output_num_chunks,input_num_turns", By: "phase", IncludeWarmup: true, Where: "model!=b"},
		} {
			o.Inputs = []string{path}
			only, _ := runJSON(t, o)
			full := o
			full.Only, full.allColumns = "", true
			if o.By != "" {
				full.ByDetail = report.ByFull
			}
			whole, _ := runJSON(t, full)
			want, _ := stats.ParseOnly(o.Only)
			var names []string
			for _, m := range want {
				names = append(names, stats.MetricNames[m])
			}
			if got := only["only"]; !reflect.DeepEqual(got, anySlice(names)) {
				t.Errorf("%s --only %s: \"only\" is %v, want %v", name, o.Only, got, names)
			}
			check := func(what string, g, w map[string]any) {
				keys := slices.Sorted(maps.Keys(g))
				wantKeys := []string{"errors", "failed", "metrics", "ok", "requests", "requests_per_sec", "retries", "runtime_sec"}
				if _, ok := g["key"]; ok {
					wantKeys = append(wantKeys, "key")
					slices.Sort(wantKeys)
				}
				if !slices.Equal(keys, wantKeys) {
					t.Errorf("%s --only %s: %s has %v, want %v", name, o.Only, what, keys, wantKeys)
				}
				for _, k := range keys {
					if k == "metrics" {
						continue
					}
					if !reflect.DeepEqual(g[k], w[k]) {
						t.Errorf("%s --only %s: %s.%s = %v, the whole report has %v", name, o.Only, what, k, g[k], w[k])
					}
				}
				gm, wm := g["metrics"].(map[string]any), w["metrics"].(map[string]any)
				if got := slices.Sorted(maps.Keys(gm)); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
					t.Errorf("%s --only %s: %s has metrics %v, want %v", name, o.Only, what, got, names)
				}
				for _, n := range names {
					if wm[n] == nil { // left out of the whole report: no samples
						if d, _ := gm[n].(map[string]any); d["count"] != 0.0 {
							t.Errorf("%s --only %s: %s %s = %v, the whole report has no samples", name, o.Only, what, n, gm[n])
						}
						continue
					}
					if !reflect.DeepEqual(gm[n], wm[n]) {
						t.Errorf("%s --only %s: %s %s = %v, the whole report has %v", name, o.Only, what, n, gm[n], wm[n])
					}
				}
			}
			check("summary", only["summary"].(map[string]any), whole["summary"].(map[string]any))
			if o.By == "" {
				continue
			}
			gs, ws := only["groups"].([]any), whole["groups"].([]any)
			if len(gs) != len(ws) || len(gs) < 2 {
				t.Fatalf("%s --only %s --by %s: %d groups, the whole report has %d", name, o.Only, o.By, len(gs), len(ws))
			}
			for i := range gs {
				g, w := gs[i].(map[string]any), ws[i].(map[string]any)
				check("group "+g["key"].(string), g, w)
			}
		}
	}
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestOnlyColumns: --only reads its metrics' fields, those that decide
// which records count, and those of --where and --by; --only ttft reads
// no ITL gaps.
func TestOnlyColumns(t *testing.T) {
	t.Parallel()
	counting := []string{"run_id", "shard", "seq", "phase", "retried", "error_class", "start", "end"}
	for _, tc := range []struct {
		o          Options
		read, skip []string
	}{
		{Options{Only: "ttft", By: "turn"}, []string{"ttft_ns", "turn"}, []string{"itl_ns", "tpot_ns", "latency_ns", "prompt_tokens", "client", "conversation_id", "model"}},
		{Options{Only: "itl"}, []string{"itl_ns"}, []string{"ttft_ns", "turn", "latency_ns"}},
		{Options{Only: "lateness", By: "conversation"}, []string{"lateness_ns", "scheduled", "conversation_id"}, []string{"itl_ns", "intended_latency_ns", "turn"}},
		{Options{Only: "think_actual", By: "model", Where: "status==200"}, []string{"think_actual_ns", "turn", "model", "status"}, []string{"itl_ns", "think_planned_ns"}},
		{Options{Only: "input_num_tokens", By: "client"}, []string{"prompt_tokens", "client_prompt_tokens", "client"}, []string{"completion_tokens", "itl_ns", "cached_tokens"}},
		{Options{By: "turn"}, []string{"itl_ns", "ttft_ns", "prompt_tokens"}, []string{"model", "error"}},
	} {
		only, err := stats.ParseOnly(tc.o.Only)
		if err != nil {
			t.Fatal(err)
		}
		tc.o.only = only
		filter, err := stats.ParseFilter(tc.o.Where)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := columns(&tc.o, filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(counting, tc.read...) {
			if !cols.Has(f) {
				t.Errorf("--only %q --by %q --where %q: %s not read", tc.o.Only, tc.o.By, tc.o.Where, f)
			}
		}
		for _, f := range tc.skip {
			if cols.Has(f) {
				t.Errorf("--only %q --by %q --where %q: %s read", tc.o.Only, tc.o.By, tc.o.Where, f)
			}
		}
	}
}

// TestOnlyUsage: unknown metric names and options that need the whole
// report are usage errors that name the problem.
func TestOnlyUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Only: "ttfb"}, `"ttfb" is not a metric; want some of ttft, tpot, itl`},
		{Options{Only: "ttft,"}, `"" is not a metric`},
		{Options{Only: "ttft", XLSX: "x.xlsx"}, "--xlsx needs the whole report"},
		{Options{Only: "ttft", SLO: "ttft_p90<=1s"}, "--slo needs the whole report"},
		{Options{Only: "ttft", By: "turn", ByDetail: report.ByFull}, "--by-detail full needs the whole report"},
		{Options{Only: "ttft", To: "-"}, "--to needs the whole report"},
		{Options{Only: "ttft", UserGaps: true}, "--user-gaps needs the whole report"},
		{Options{Only: "ttft", Metrics: "m.jsonl"}, "--metrics-file needs the whole report"},
	} {
		tc.o.Inputs = []string{"testdata/none.jsonl"}
		err := Run(t.Context(), tc.o)
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want a usage error with %q", tc.o, err, tc.want)
		}
	}
}

// FuzzParseOnly: any spec parses to metrics in report order, each once,
// or fails with an error naming the spec.
func FuzzParseOnly(f *testing.F) {
	for _, s := range []string{"", "ttft", "ttft_ms,itl", "latency, ttft", "x", ",", "ttft,ttft"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ms, err := stats.ParseOnly(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "--only "+spec+":") {
				t.Fatalf("%q: error %q does not name the spec", spec, err)
			}
			return
		}
		if spec != "" && len(ms) == 0 {
			t.Fatalf("%q: no metric and no error", spec)
		}
		for i := 1; i < len(ms); i++ {
			if ms[i] <= ms[i-1] {
				t.Fatalf("%q: %v not in report order or repeated", spec, ms)
			}
		}
	})
}

// TestByIntKeys: --by turn and --by client find most groups by their
// integer key (collector.byInt) and the others, negative or too large,
// by their string key; every group gets exactly its records, whichever
// way it was found, the order in which keys first appear included.
func TestByIntKeys(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 9, Run: "r", Convs: 60, MaxTurns: 6, FailEvery: 7})
	keys := []int{3, -2, 0, maxIntGroup, 1, maxIntGroup + 3, 3, 70, -2, 0}
	for i := range recs {
		recs[i].Turn, recs[i].Client = keys[i%len(keys)], keys[(i*7)%len(keys)]
	}
	path := writeTemp(t, "r.parquet", statstest.Parquet(t, recs))
	for _, by := range []string{"turn", "client"} {
		type counts struct{ requests, ttft float64 }
		want := map[string]counts{}
		for i := range recs {
			r := &recs[i]
			if r.Retried {
				continue
			}
			k := strconv.Itoa(r.Turn)
			if by == "client" {
				k = strconv.Itoa(r.Client)
			}
			c := want[k]
			c.requests++
			if r.OK() && r.TTFTNs != nil {
				c.ttft++
			}
			want[k] = c
		}
		for _, only := range []string{"ttft", ""} {
			m, _ := runJSON(t, Options{Inputs: []string{path}, By: by, Only: only})
			got := map[string]counts{}
			for _, g := range m["groups"].([]any) {
				g := g.(map[string]any)
				ttft := g["metrics"].(map[string]any)["ttft_ms"].(map[string]any)["count"].(float64)
				got[g["key"].(string)] = counts{g["requests"].(float64), ttft}
			}
			if !maps.Equal(got, want) {
				t.Errorf("--by %s --only %q: groups %v, want %v", by, only, got, want)
			}
		}
	}
}

// TestReadLiveUnlocks: however reading ends (the end of the input, a
// malformed line under --strict, the report already finished), from a
// live input (a lock per record) or from a file (a lock per readBatch
// records), readLive leaves the collector unlocked.
func TestReadLiveUnlocks(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 3, Run: "r", Convs: 300, MaxTurns: 4})
	good := statstest.JSONL(t, recs)
	bad := append(append(slices.Clone(good[:len(good)/2]), "{oops\n"...), good[len(good)/2:]...)
	for _, tc := range []struct {
		name    string
		data    []byte
		strict  bool
		stopped bool
		wantErr bool
	}{
		{"end", good, false, false, false},
		{"strict", bad, true, false, true},
		{"first record strict", append([]byte("{oops\n"), good...), true, false, true},
		{"stopped", good, false, true, false},
	} {
		for _, stdin := range []bool{false, true} {
			o := &Options{Only: "ttft", By: "turn", Strict: tc.strict, Err: io.Discard}
			o.only, _ = stats.ParseOnly(o.Only)
			fs := &record.Files{Paths: []string{writeTemp(t, "r.jsonl", tc.data)}}
			if stdin {
				o.Inputs, fs = []string{"-"}, &record.Files{Paths: []string{"-"}, Stdin: bytes.NewReader(tc.data)}
			} else {
				o.Inputs = fs.Paths
			}
			c, err := newCollector(o, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.stopped = tc.stopped
			if err := c.readLive(fs); (err != nil) != tc.wantErr {
				t.Errorf("%s (stdin %v): %v", tc.name, stdin, err)
			}
			if !c.mu.TryLock() {
				t.Fatalf("%s (stdin %v): the collector is left locked", tc.name, stdin)
			}
			c.mu.Unlock()
		}
	}
}
