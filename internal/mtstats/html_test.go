package mtstats

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// overTime are the titles of the charts drawn against time.
var overTime = []string{"Requests completed per second", "Output tokens per second", "TTFT over time", "End-to-end latency over time"}

// firstStart is the header's form of the earliest start of a counted
// (not warmup) request.
func firstStart(recs []record.Record) string {
	var t time.Time
	for _, r := range recs {
		if r.Phase != record.PhaseWarmup && (t.IsZero() || r.Start.Before(t)) {
			t = r.Start
		}
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// TestHTMLSecondsSinceStart: charts over time are in seconds since the
// run's start, alone as under --compare, and the header gives each run's
// start in UTC (issue 23: a single run's charts were on the wall clock).
func TestHTMLSecondsSinceStart(t *testing.T) {
	t.Parallel()
	a := statstest.Records(statstest.Config{Seed: 5, Run: "a", Convs: 20, MaxTurns: 3})
	b := statstest.Records(statstest.Config{Seed: 6, Run: "b", Convs: 10, MaxTurns: 3, Start: time.Date(2026, 6, 1, 8, 30, 0, 0, time.UTC)})
	pa, pb := writeTemp(t, "a.jsonl", statstest.JSONL(t, a)), writeTemp(t, "b.jsonl", statstest.JSONL(t, b))
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		o      Options
		header []string
	}{
		{"one run", Options{Inputs: []string{pa}}, []string{`Start: <time class="start">` + firstStart(a) + `</time> (UTC)`}},
		{"compare", Options{Inputs: []string{"a=" + pa, "b=" + pb}, Compare: true},
			[]string{`a <time class="start">` + firstStart(a) + `</time>`, `b <time class="start">` + firstStart(b) + `</time>`}},
	} {
		tc.o.HTML = filepath.Join(dir, tc.name+".html")
		runJSON(t, tc.o)
		data, err := os.ReadFile(tc.o.HTML)
		if err != nil {
			t.Fatal(err)
		}
		page := string(data)
		for _, h := range tc.header {
			if !strings.Contains(page, h) {
				i := strings.Index(page, `<p class="sub">`)
				t.Errorf("%s: header lacks %s:\n%s", tc.name, h, page[i:i+400])
			}
		}
		seen := 0
		for _, c := range htmlCharts(t, page) {
			if !slices.Contains(overTime, c.Title) {
				continue
			}
			seen++
			if c.XLabel != "seconds since the run's start" || c.X[0] < 0 || c.X[0] > 60 || c.X[len(c.X)-1] > 3600 {
				t.Errorf("%s: %s: x %v..%v (%s), want seconds since the start", tc.name, c.Title, c.X[0], c.X[len(c.X)-1], c.XLabel)
			}
		}
		if seen != len(overTime) {
			t.Errorf("%s: %d charts over time, want %d", tc.name, seen, len(overTime))
		}
	}
}

var (
	chartBoxRe = regexp.MustCompile(`(?s)<div class="chart"><div class="title">(.*?)</div>(.*?)</table></div>`)
	valueRowRe = regexp.MustCompile(`(?s)<tr><td><span class="sw" style="background:(#[0-9a-f]{6})"></span>(.*?)</td>(.*?)</tr>`)
	markRe     = regexp.MustCompile(`<li class="mark"><span class="dash" style="border-color:(#[0-9a-f]{6})"></span>(.*?)</li>`)
	digitRe    = regexp.MustCompile(`<td>-?[0-9]`)
)

// TestHTMLValuesInPage: the page itself carries every chart's values (a
// table under each, a summary in each legend while no pointer is over
// it) and a print stylesheet, so a PDF print or a screenshot shows
// numbers (issue 23: legends read "–" until hovered).
func TestHTMLValuesInPage(t *testing.T) {
	t.Parallel()
	page := htmlOf(t, statstest.Config{Seed: 7, Run: "r", Convs: 20, MaxTurns: 4, ITL: true})
	charts := htmlCharts(t, page)
	boxes := chartBoxRe.FindAllStringSubmatch(page, -1)
	if len(boxes) != len(charts) || len(charts) < 8 {
		t.Fatalf("%d chart boxes for %d charts", len(boxes), len(charts))
	}
	for i, c := range charts {
		if boxes[i][1] != c.Title {
			t.Errorf("box %d is %q, chart %q", i, boxes[i][1], c.Title)
		}
		rows := valueRowRe.FindAllStringSubmatch(boxes[i][2], -1)
		if len(rows) != len(c.Series) {
			t.Errorf("%s: %d table rows for %d series", c.Title, len(rows), len(c.Series))
			continue
		}
		for j, s := range c.Series {
			if rows[j][2] != s.Label || !digitRe.MatchString(rows[j][3]) {
				t.Errorf("%s: row %q %q for series %q: want its numbers", c.Title, rows[j][2], rows[j][3], s.Label)
			}
			if !regexp.MustCompile(`[0-9]`).MatchString(s.Summary) {
				t.Errorf("%s: series %q: legend summary %q has no number", c.Title, s.Label, s.Summary)
			}
		}
	}
	for _, want := range []string{"@media print", "idx == null ? s.summary"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestHTMLSweepCompare: on the page of two sweeps (the README's recipe)
// given under many labels, every capacity label is an item of the list
// under its chart, in its run's colour, none drawn on the canvas (issue
// 23: they overlapped each other and the ticks); the knee's series take
// their run's colour and join its points.
func TestHTMLSweepCompare(t *testing.T) {
	t.Parallel()
	var inputs []string
	const runs = 10
	sweeps := make([]string, 2)
	for i, f := range []string{"sweep-max4.jsonl.gz", "sweep-max8.jsonl.gz"} {
		sweeps[i] = readGz(t, filepath.Join("..", "..", "cmd", "mtstats", "testdata", f))
	}
	runID := regexp.MustCompile(`"run_id":"[^"]*"`)
	for i := range runs {
		// Each input a run of its own (the same run's records would be
		// counted once).
		recs := runID.ReplaceAllString(sweeps[i%2], `"run_id":"s`+itoa(i)+`"`)
		inputs = append(inputs, "s"+itoa(i)+"="+writeTemp(t, "s"+itoa(i)+".jsonl", []byte(recs)))
	}
	html := filepath.Join(t.TempDir(), "sweeps.html")
	runJSON(t, Options{Inputs: inputs, Compare: true, HTML: html, SLO: "ttft_p95<=70ms"})
	data, _ := os.ReadFile(html)
	page := string(data)
	if i := strings.Index(page, "const CHARTS = "); i < 0 || strings.Contains(page[i:], "fillText") {
		t.Error("the page script draws text on a chart")
	}
	charts := htmlCharts(t, page)
	boxes := chartBoxRe.FindAllStringSubmatch(page, -1)
	var thr, knee *report.ChartSpec
	thrBox := ""
	for i := range charts {
		switch charts[i].Title {
		case "Throughput by stage":
			thr, thrBox = &charts[i], boxes[i][2]
			marks := markRe.FindAllStringSubmatch(boxes[i][2], -1)
			if len(marks) != runs {
				t.Fatalf("%d capacity labels under the chart, want %d", len(marks), runs)
			}
			for j, m := range marks {
				if !strings.HasPrefix(m[2], "s"+itoa(j)+": ") || m[1] != rowColour(t, boxes[i][2], j) {
					t.Errorf("label %d: %q in %s, want run s%d's in its colour", j, m[2], m[1], j)
				}
			}
		case "Latency against throughput (the knee)":
			knee = &charts[i]
			rows := valueRowRe.FindAllStringSubmatch(boxes[i][2], -1)
			for j, s := range charts[i].Series {
				run := j / 2
				if !strings.HasPrefix(s.Label, "s"+itoa(run)+" ") || rows[j][1] != rowColour(t, thrBox, run) {
					t.Errorf("knee series %q in %s, want run s%d's colour", s.Label, rows[j][1], run)
				}
				stages := 0
				for _, y := range thr.Series[run].Y {
					if y != nil {
						stages++
					}
				}
				if len(s.Join) != stages || stages < 6 {
					t.Errorf("knee series %q joins %d points, want the sweep's %d stages", s.Label, len(s.Join), stages)
				}
			}
		}
	}
	if thr == nil || knee == nil || len(knee.Series) != 2*runs {
		t.Fatalf("throughput chart %v, knee %v", thr != nil, knee != nil)
	}
}

// rowColour is the swatch colour of row i of a chart box's table.
func rowColour(t *testing.T, box string, i int) string {
	t.Helper()
	rows := valueRowRe.FindAllStringSubmatch(box, -1)
	if i >= len(rows) {
		t.Fatalf("no row %d in the box's table", i)
	}
	return rows[i][1]
}

// readGz returns the text of a gzip file.
func readGz(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// htmlOf returns the HTML report of the records cfg makes.
func htmlOf(t *testing.T, cfg statstest.Config) string {
	t.Helper()
	p := writeTemp(t, "r.jsonl", statstest.JSONL(t, statstest.Records(cfg)))
	html := filepath.Join(t.TempDir(), "r.html")
	runJSON(t, Options{Inputs: []string{p}, HTML: html})
	data, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
