package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
)

// target is a bound a figure must meet.
type target struct {
	Op    string  `json:"op"` // ">=" or "<="
	Value float64 `json:"value"`
}

func atLeast(v float64) *target { return &target{">=", v} }
func atMost(v float64) *target  { return &target{"<=", v} }

func (t *target) met(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if t.Op == ">=" {
		return v >= t.Value
	}
	return v <= t.Value
}

// figure is one measured quantity, one value per run.
type figure struct {
	section, name, unit string
	values              []float64
	target              *target
	na                  string // why it was not measured
	notes               []string
}

// figures collects the figures in the order they were first reported.
type figures struct {
	mu   sync.Mutex
	list []*figure
	keys map[string]*figure
}

func newFigures() *figures { return &figures{keys: map[string]*figure{}} }

func (fs *figures) get(section, name, unit string, t *target) *figure {
	k := section + "\x00" + name
	f := fs.keys[k]
	if f == nil {
		f = &figure{section: section, name: name, unit: unit, target: t}
		fs.keys[k] = f
		fs.list = append(fs.list, f)
	}
	return f
}

// add records one run's value of a figure.
func (fs *figures) add(section, name, unit string, t *target, v float64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.get(section, name, unit, t)
	f.values = append(f.values, v)
}

// na records that a figure could not be measured, and why.
func (fs *figures) na(section, name, unit string, t *target, why string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.get(section, name, unit, t)
	if f.na == "" {
		f.na = why
	}
}

// note attaches a remark to a figure (printed under the table).
func (fs *figures) note(section, name, text string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.keys[section+"\x00"+name]; f != nil && !slices.Contains(f.notes, text) {
		f.notes = append(f.notes, text)
	}
}

// row is one line of the report.
type row struct {
	Section string    `json:"section"`
	Figure  string    `json:"figure"`
	Unit    string    `json:"unit"`
	Median  *float64  `json:"median,omitempty"`
	Values  []float64 `json:"values,omitempty"`
	Target  *target   `json:"target,omitempty"`
	Result  string    `json:"result"` // PASS, FAIL, "-" (no target), n/a
	NA      string    `json:"na,omitempty"`
	Notes   []string  `json:"notes,omitempty"`
}

// report is the outcome of a benchmark run.
type report struct {
	Host    string `json:"host"`
	HostEnd string `json:"host_end"`
	Elapsed string `json:"elapsed"`
	Smoke   bool   `json:"smoke"`
	Runs    int    `json:"runs"`
	Rows    []row  `json:"figures"`
	Checked int    `json:"checked"`
	Failed  int    `json:"failed"`
}

// report evaluates the figures; check=false (smoke) reports the results
// but does not count failures.
func (fs *figures) report(check bool) *report {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	rep := &report{}
	for _, f := range fs.list {
		r := row{Section: f.section, Figure: f.name, Unit: f.unit, Target: f.target, Notes: f.notes, Result: "-"}
		switch {
		case f.na != "" || len(f.values) == 0:
			r.Result, r.NA = "n/a", f.na
			if r.NA == "" {
				r.NA = "not measured"
			}
		default:
			r.Values = f.values
			m := median(f.values)
			r.Median = &m
			if f.target != nil {
				rep.Checked++
				r.Result = "PASS"
				if !f.target.met(m) {
					r.Result = "FAIL"
					rep.Failed++
				}
			}
		}
		if f.target != nil && r.Result == "n/a" {
			rep.Checked++
		}
		rep.Rows = append(rep.Rows, r)
	}
	if !check {
		rep.Failed = 0
	}
	return rep
}

// median returns the median of xs (NaN for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (r *row) cells() (value, spread, tgt string) {
	switch {
	case r.Median == nil:
		value = "n/a (" + r.NA + ")"
	default:
		value = formatValue(*r.Median, r.Unit)
		if len(r.Values) > 1 {
			spread = formatValue(slices.Min(r.Values), r.Unit) + " … " + formatValue(slices.Max(r.Values), r.Unit)
		}
	}
	if r.Target != nil {
		tgt = r.Target.Op + " " + formatValue(r.Target.Value, r.Unit)
	}
	return value, spread, tgt
}

func (rep *report) text(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "SECTION\tFIGURE\tVALUE\tUNIT\tRUNS (min … max)\tTARGET\tRESULT\n")
	for i := range rep.Rows {
		r := &rep.Rows[i]
		value, spread, tgt := r.cells()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Section, r.Figure, value, r.Unit, spread, tgt, r.Result)
	}
	tw.Flush()
	rep.footer(w)
}

func (rep *report) markdown(w io.Writer) {
	fmt.Fprintf(w, "| section | figure | value | unit | runs (min … max) | target | result |\n")
	fmt.Fprintf(w, "|---|---|--:|---|---|---|---|\n")
	for i := range rep.Rows {
		r := &rep.Rows[i]
		value, spread, tgt := r.cells()
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Section, r.Figure, value, r.Unit, spread, tgt, r.Result)
	}
	fmt.Fprintln(w)
	rep.footer(w)
}

func (rep *report) footer(w io.Writer) {
	n := 0
	for i := range rep.Rows {
		for _, note := range rep.Rows[i].Notes {
			if n == 0 {
				fmt.Fprintln(w, "\nNotes:")
			}
			n++
			fmt.Fprintf(w, "- %s / %s: %s\n", rep.Rows[i].Section, rep.Rows[i].Figure, note)
		}
	}
	mode := "full"
	if rep.Smoke {
		mode = "smoke (timings not checked)"
	}
	fmt.Fprintf(w, "\nmachine at start: %s\nmachine at end:   %s\nmode: %s, medians over %d run(s), %s; targets met: %d of %d\n",
		rep.Host, rep.HostEnd, mode, rep.Runs, rep.Elapsed, rep.Checked-rep.countFail(), rep.Checked)
}

func (rep *report) countFail() int {
	n := 0
	for _, r := range rep.Rows {
		if r.Target != nil && (r.Result == "FAIL" || r.Result == "n/a") {
			n++
		}
	}
	return n
}

func (rep *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	return nil
}

// formatValue renders v for its unit: rates with thousands separators,
// times with enough decimals to show sub-unit differences.
func formatValue(v float64, unit string) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return thousands(int64(math.Round(v)))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// describeHost names the machine and its load: CPU model, cores, memory,
// Go version and load average.
func describeHost() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "MemTotal:") {
				f := strings.Fields(line)
				if len(f) >= 2 {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
						mem = fmt.Sprintf(", %.0f GiB", kb/(1<<20))
					}
				}
			}
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			load = ", load average " + strings.Join(f[:3], " ")
		}
	}
	return fmt.Sprintf("%s, %d cores%s, %s %s/%s%s", model, runtime.NumCPU(), mem, runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}
