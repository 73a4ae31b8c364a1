package stats

import (
	"encoding/xml"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

func itoa(n int) string { return strconv.Itoa(n) }

// checkHTML checks that the report is self-contained and well formed: no
// external resources, every SVG parses as XML, all charts are there.
func checkHTML(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, bad := range []string{"<script src", "<link ", "http://cdn", "https://", "@import"} {
		if strings.Contains(s, bad) {
			t.Errorf("html: external resource %q", bad)
		}
	}
	for _, want := range []string{"TTFT distribution (CDF)", "E2E latency distribution (CDF)", "TTFT by turn",
		"Cache hit by turn", "Throughput over time", "Latency over time", "Statistics summary:"} {
		if !strings.Contains(s, want) {
			t.Errorf("html: %q missing", want)
		}
	}
	n := 0
	for rest := s; ; {
		i := strings.Index(rest, "<svg")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "</svg>")
		if j < 0 {
			t.Fatal("html: unterminated svg")
		}
		svg := rest[i : i+j+len("</svg>")]
		dec := xml.NewDecoder(strings.NewReader(svg))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("html: svg %d: %v", n, err)
			}
		}
		if strings.Count(svg, `class="series"`) == 0 || strings.Contains(svg, "NaN") {
			t.Errorf("html: svg %d has no series or NaN coordinates", n)
		}
		n++
		rest = rest[i+j:]
	}
	if n != 6 {
		t.Errorf("html: %d charts, want 6", n)
	}
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
