package mtstats

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/report"
	"github.com/xuri/excelize/v2"
)

func itoa(n int) string { return strconv.Itoa(n) }

// checkHTML checks that the report is self-contained (no external
// resources; the chart library inlined) and that its charts' data are
// whole: the expected charts, every series as long as its x values, each
// with some value, and no NaN.
func checkHTML(t *testing.T, path string, want ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, bad := range []string{"<script src", "<link ", "http://", "@import", "https://cdn"} {
		if strings.Contains(s, bad) {
			t.Errorf("html: external resource %q", bad)
		}
	}
	if !strings.Contains(s, "uPlot") || !strings.Contains(s, "<h2>Summary</h2>") {
		t.Error("html: chart library or summary missing")
	}
	charts := htmlCharts(t, s)
	titles := map[string]bool{}
	for _, c := range charts {
		titles[c.Title] = true
		if len(c.X) == 0 || len(c.Series) == 0 {
			t.Errorf("html: chart %q has no data", c.Title)
		}
		for _, ser := range c.Series {
			some := false
			for _, y := range ser.Y {
				some = some || y != nil
			}
			if len(ser.Y) != len(c.X) || !some {
				t.Errorf("html: chart %q series %q: %d values for %d x, some %v", c.Title, ser.Label, len(ser.Y), len(c.X), some)
			}
		}
	}
	if len(want) == 0 {
		want = []string{"Requests completed per second", "Output tokens per second", "TTFT over time", "End-to-end latency over time",
			"TTFT by percentile", "End-to-end latency by percentile", "TTFT by user turn", "Prefix-cache hit by user turn"}
	}
	for _, w := range want {
		if !titles[w] {
			t.Errorf("html: chart %q missing (have %v)", w, titles)
		}
	}
}

// htmlCharts returns the chart data of a report page.
func htmlCharts(t *testing.T, page string) []report.ChartSpec {
	t.Helper()
	const head = "const CHARTS = "
	i := strings.Index(page, head)
	if i < 0 {
		t.Fatal("html: no chart data")
	}
	j := strings.Index(page[i:], ";\n")
	var charts []report.ChartSpec
	if err := json.Unmarshal([]byte(page[i+len(head):i+j]), &charts); err != nil {
		t.Fatalf("html: chart data: %v", err)
	}
	if strings.Contains(page[i:i+j], "NaN") {
		t.Error("html: NaN in the chart data")
	}
	return charts
}

// checkXLSX reopens the workbook and compares its figures with the JSON
// report.
func checkXLSX(t *testing.T, path string, m map[string]any, records int) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Summary", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	figures := map[string]string{}
	var header []string
	metrics := map[string][]string{}
	for _, r := range rows {
		if len(r) == 0 {
			continue
		}
		if r[0] == "metric" && header == nil {
			header = r
			continue
		}
		if header != nil && len(r) > 2 {
			if _, seen := metrics[r[0]]; !seen {
				metrics[r[0]] = r
			}
		} else if len(r) == 2 && figures[r[0]] == "" {
			figures[r[0]] = r[1]
		}
	}
	num := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("xlsx: %q: %v", s, err)
		}
		return x
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("xlsx %s = %v, json %v", name, got, want)
		}
	}
	near("runtime_sec", num(figures["runtime_sec"]), get(m, "summary", "runtime_sec").(float64))
	near("requests", num(figures["requests"]), get(m, "summary", "requests").(float64))
	near("cache_hit_rate", num(figures["cache_hit_rate"]), get(m, "summary", "cache_hit_rate").(float64))
	for _, name := range []string{"ttft_ms", "latency_ms", "itl_ms"} {
		row := metrics[name]
		for i, col := range header {
			if i == 0 || i >= len(row) || row[i] == "" {
				continue
			}
			if want, ok := get(m, "summary", "metrics", name, col).(float64); ok {
				near(name+"."+col, num(row[i]), want)
			}
		}
	}
	raw, err := f.GetRows("Raw data")
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != records+1 || raw[0][0] != "run_id" {
		t.Errorf("raw data: %d rows, want %d + header", len(raw), records)
	}
}
