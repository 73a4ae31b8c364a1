package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

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
	m := matchStamps(recs, srv)
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
