package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Formats of the report on stdout.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
	FormatCSV      = "csv"
)

// Render writes rep to w in format. JSON is indented and writes '<', '>'
// and '&' as themselves: objectives read "ttft_p95<=60ms", not
// "ttft_p95\u003c=60ms" (as sweep's Capacity.WriteJSON writes them).
func Render(w io.Writer, rep *Report, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case FormatCSV:
		return renderCSV(w, rep)
	case FormatTable, FormatMarkdown, "":
		return (&textWriter{w: w, md: format == FormatMarkdown}).report(rep)
	case FormatLLMD:
		return renderLLMD(w, rep)
	}
	return fmt.Errorf("unknown format %q (table, markdown, json, csv, llm-d)", format)
}

// fmtNum formats a figure with two decimals; NaN is "NaN" as in pandas.
func fmtNum(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func fmtPct(x stats.Num) string {
	if math.IsNaN(float64(x)) {
		return "n/a"
	}
	return strconv.FormatFloat(float64(x)*100, 'f', 2, 64) + "%"
}

const rule = "----------------------------------------------------------------------------------------------------"

// textWriter renders the table and markdown formats.
type textWriter struct {
	w   io.Writer
	md  bool
	err error
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func (t *textWriter) heading(s string) {
	if t.md {
		t.printf("\n## %s\n\n", s)
	} else {
		t.printf("%s\n%s\n", rule, s)
	}
}

// pairs prints "key = value" lines (a two-column table in markdown).
func (t *textWriter) pairs(kv [][2]string) {
	if t.md {
		rows := make([][]string, len(kv))
		for i, p := range kv {
			rows[i] = []string{p[0], p[1]}
		}
		t.table([]string{"figure", "value"}, rows)
		return
	}
	for _, p := range kv {
		t.printf("%s = %s\n", p[0], p[1])
	}
}

func (t *textWriter) table(header []string, rows [][]string) {
	if t.err != nil {
		return
	}
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithTrimSpace(tw.Off),
	}
	if t.md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	} else {
		opts = append(opts, tablewriter.WithRendition(tw.Rendition{
			Borders: tw.BorderNone, Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		}))
	}
	var b strings.Builder
	tb := tablewriter.NewTable(&b, opts...)
	tb.Header(header)
	for _, r := range rows {
		if err := tb.Append(r); err != nil {
			t.err = err
			return
		}
	}
	if err := tb.Render(); err != nil {
		t.err = err
		return
	}
	// Trailing blanks make golden files and diffs fragile.
	for line := range strings.SplitSeq(strings.TrimRight(b.String(), "\n"), "\n") {
		t.printf("%s\n", strings.TrimRight(line, " "))
	}
}

// describe renders a describe table; 99.9% and 99.99% columns appear when
// some row has enough samples.
func (t *textWriter) describe(ms ...stats.Metrics) {
	has := map[string]bool{}
	for _, m := range ms {
		for _, d := range m {
			has["p99.9"] = has["p99.9"] || d.HasP999
			has["p99.99"] = has["p99.99"] || d.HasP9999
		}
	}
	header := []string{""}
	var keys []string
	for _, s := range stats.StatNames {
		if (s.Key == "p99.9" || s.Key == "p99.99") && !has[s.Key] {
			continue
		}
		header = append(header, s.Header)
		keys = append(keys, s.Key)
	}
	var rows [][]string
	for _, m := range ms {
		for _, d := range m {
			row := []string{d.Name}
			for _, k := range keys {
				v, ok := d.Stat(k)
				switch {
				case !ok:
					row = append(row, "")
				case k == "count":
					row = append(row, strconv.Itoa(d.Count))
				default:
					row = append(row, fmtNum(v))
				}
			}
			rows = append(rows, row)
		}
	}
	t.table(header, rows)
	for _, m := range ms {
		for _, d := range m {
			if n := countNotes[d.Name]; n != "" {
				if t.md {
					t.printf("\n") // not a row of the table
				}
				t.printf("%s\n", n)
			}
		}
	}
}

// countNotes say what a describe row counts where its name, vLLM's, does
// not: vLLM's turns are messages, mtkit's user turns are requests
// (issue 23).
var countNotes = map[string]string{
	"input_num_turns": "(input_num_turns, vLLM's name: messages sent with the request, the history and the new user message)",
}

func (t *textWriter) report(rep *Report) error {
	in := rep.Inputs
	partial := ""
	switch {
	case rep.Partial:
		partial = " (interrupted: partial input)"
	case rep.Live:
		partial = " (live: input still being read)"
	}
	t.printf("inputs: %d file(s), %d records, %d malformed (%d truncated), %d duplicates, %d warmup skipped, %d filtered out%s\n",
		len(in.Files), in.Records, in.Malformed, in.Truncated, in.Duplicates, in.Warmup, in.FilteredOut, partial)
	if rep.Compare != nil {
		t.compare(rep.Compare)
	}
	if rep.Compare == nil || len(rep.Groups) == 0 {
		t.group("Statistics summary:", rep.Summary, true)
	}
	if rep.SLO != nil {
		t.slo("SLO", rep.SLO)
	}
	for _, g := range rep.Groups {
		if s, ok := g.SLO.(*judge.SLOReport); ok {
			t.slo("SLO of "+g.Key, s)
		}
	}
	if rep.Affinity != nil {
		t.affinity(rep.Affinity)
	}
	if rep.Segments != nil {
		t.segments(rep.Segments)
	}
	if len(rep.Stages) > 0 {
		t.stages("by stage:", rep.Stages)
	}
	if rep.Capacity != nil {
		t.heading("capacity:")
		t.printf("%s\n", rep.Capacity.Line())
	}
	t.stagedRuns(rep.StagedRuns)
	if len(rep.Groups) > 0 && rep.Compare == nil {
		if rep.By != "conversation" && rep.ByDetail != ByTable {
			for _, g := range rep.Groups {
				t.group(fmt.Sprintf("%s=%s:", rep.By, g.Key), g, rep.By != "turn")
			}
		}
		t.overview(rep.By, rep.Only, rep.Groups)
	}
	t.server(rep.Server) // server.go
	t.retention("Cache retention:", rep.Retention)
	for _, l := range rep.RetentionByInput {
		t.retention(fmt.Sprintf("Cache retention of %s:", l.Key), l.Result)
	}
	if !t.md {
		t.printf("%s\n", rule)
	}
	return t.err
}

func (t *textWriter) group(title string, g *stats.Group, showConv bool) {
	t.heading(title)
	pairs := [][2]string{
		{"runtime_sec", fmtSec(g.RuntimeSec)},
		{"requests_per_sec", fmtNum(float64(g.RequestsPerSec))},
	}
	if !g.Limited() { // --only reads no turn or attempt
		pairs = append(pairs, [2]string{"session_starts_per_sec", fmtNum(float64(g.SessionStartsPerSec))})
	}
	t.pairs(pairs)
	if !t.md {
		t.printf("%s\n", rule)
	}
	t.describe(g.Metrics)
	if !t.md {
		t.printf("%s\n", rule)
	} else {
		t.printf("\n")
	}
	kv := [][2]string{
		{"requests", fmt.Sprintf("%d (ok %d, failed %d%s)", g.Requests, g.OK, g.Failed, fmtErrors(g.Errors))},
		{"retries", strconv.Itoa(g.Retries)},
	}
	if v := g.VerifyOutput; v != nil {
		line := fmt.Sprintf("%d of %d answers differ from the dataset's", v.Mismatched, v.Compared)
		if f := v.FirstMismatch; f != nil {
			line += fmt.Sprintf(" (first: conversation %s, user turn %d)", f.Conversation, f.Turn)
		}
		kv = append(kv, [2]string{"verify_output", line})
	}
	if g.Limited() {
		t.pairs(kv)
		return
	}
	kv = append(kv, [][2]string{
		{"input_tokens_per_sec", fmtNum(float64(g.InputTokensPerSec))},
		{"output_tokens_per_sec", fmtNum(float64(g.OutputTokensPerSec))},
		{"total_tokens_per_sec", fmtNum(float64(g.TotalTokensPerSec))},
		{"cache_hit_rate", fmtCache(g)},
	}...)
	if g.GoodRequests != nil {
		kv = append(kv, [2]string{"goodput", fmt.Sprintf("%s req/s (%d good requests)", fmtNum(float64(*g.Goodput)), *g.GoodRequests)})
	}
	kv = append(kv, [2]string{"conversations", fmtConversations(g.Conversations)})
	t.pairs(kv)
	if showConv && g.Conversations.Count > 0 {
		if t.md {
			t.printf("\n")
		}
		t.describe(g.Conversations.Metrics)
	}
}

func fmtSec(x stats.Num) string {
	if math.IsNaN(float64(x)) {
		return "NaN"
	}
	return strconv.FormatFloat(float64(x), 'f', 3, 64)
}

func fmtErrors(errs map[string]int) string {
	if len(errs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, errs[k])
	}
	return ": " + strings.Join(parts, ", ")
}

func fmtCache(g *stats.Group) string {
	if g.CacheReportedRequests == 0 {
		return "n/a (the server did not report cached_tokens)"
	}
	return fmt.Sprintf("%s (%d of %d requests reported)", fmtPct(g.CacheHitRate), g.CacheReportedRequests, g.OK)
}

// overview is one row per group with the headline figures (the TTFT by
// turn view), or the per-conversation table.
// With --only (only, the metrics' names), the row is the request counts
// and each metric's p50, p90 and p99.
func (t *textWriter) overview(by string, only []string, groups []*stats.Group) {
	if by == "turn" {
		t.heading("by turn (user turn: the conversation's request number, from 0):")
	} else {
		t.heading("by " + by + ":")
	}
	q := func(g *stats.Group, m, st string) string {
		d, ok := g.Metrics.Get(m)
		if !ok {
			return "NaN"
		}
		v, _ := d.Stat(st)
		return fmtNum(v)
	}
	if only != nil {
		header := []string{by, "requests", "failed"}
		for _, m := range only {
			for _, st := range []string{"p50", "p90", "p99"} {
				header = append(header, strings.TrimSuffix(m, "_ms")+"_"+st)
			}
		}
		var rows [][]string
		for _, g := range groups {
			row := []string{g.Key, strconv.Itoa(g.Requests), strconv.Itoa(g.Failed)}
			for _, m := range only {
				row = append(row, q(g, m, "p50"), q(g, m, "p90"), q(g, m, "p99"))
			}
			rows = append(rows, row)
		}
		t.table(header, rows)
		return
	}
	if by == "conversation" {
		header := []string{"conversation", "user_turns", "failed", "duration_ms", "wait_ms", "ttft_mean_ms", "ttft_max_ms", "cache_hit"}
		var rows [][]string
		for _, g := range groups {
			c := g.Conversations.Metrics
			dur, _ := c.Get(stats.ConvDuration)
			wait, _ := c.Get(stats.ConvWait)
			rows = append(rows, []string{g.Key, strconv.Itoa(g.Requests), strconv.Itoa(g.Failed),
				fmtNum(dur.Sum), fmtNum(wait.Sum), q(g, "ttft_ms", "mean"), q(g, "ttft_ms", "max"), fmtPct(g.CacheHitRate)})
		}
		t.table(header, rows)
		return
	}
	header := []string{by, "requests", "failed", "ttft_p50", "ttft_p90", "ttft_p99", "itl_p50", "itl_p90", "itl_p99",
		"latency_p50", "latency_p90", "latency_p99", "output_tokens_per_sec", "input_tokens_mean", "cache_hit"}
	var rows [][]string
	for _, g := range groups {
		rows = append(rows, []string{g.Key, strconv.Itoa(g.Requests), strconv.Itoa(g.Failed),
			q(g, "ttft_ms", "p50"), q(g, "ttft_ms", "p90"), q(g, "ttft_ms", "p99"),
			q(g, "itl_ms", "p50"), q(g, "itl_ms", "p90"), q(g, "itl_ms", "p99"),
			q(g, "latency_ms", "p50"), q(g, "latency_ms", "p90"), q(g, "latency_ms", "p99"),
			fmtNum(float64(g.OutputTokensPerSec)),
			fmtNum(float64(g.InputTokens) / float64(g.OK)), fmtPct(g.CacheHitRate)})
	}
	t.table(header, rows)
}

func (t *textWriter) slo(title string, s *judge.SLOReport) {
	verdict := "met"
	if !s.Met {
		verdict = "NOT MET"
	}
	t.heading(title + ": " + verdict)
	var rows [][]string
	for _, o := range s.Objectives {
		ok := "ok"
		if !o.Met {
			ok = "FAIL"
		}
		rows = append(rows, []string{o.Objective, o.Stat, fmtNum(float64(o.ValueMs)), fmtNum(float64(o.LimitMs)), strconv.Itoa(o.Samples), ok})
	}
	t.table([]string{"objective", "stat", "value_ms", "limit_ms", "samples", "verdict"}, rows)
	if t.md {
		t.printf("\n")
	}
	t.pairs([][2]string{
		{"good_requests", fmt.Sprintf("%d of %d (%s)", s.GoodRequests, s.Requests, fmtPct(s.GoodRequestShare))},
		{"goodput", fmtNum(float64(s.Goodput)) + " req/s"},
		{"good_conversations", fmt.Sprintf("%d of %d (%s)", s.GoodConversations, s.Conversations, fmtPct(s.GoodConversationShare))},
	})
}

func (t *textWriter) compare(c *stats.Comparison) {
	t.heading("Comparison:")
	header := append([]string{""}, c.Labels...)
	for _, l := range c.Labels[min(1, len(c.Labels)):] {
		header = append(header, l+"/"+c.Labels[0])
	}
	var rows [][]string
	for _, r := range c.Rows {
		row := []string{r.Name}
		for _, v := range r.Values {
			row = append(row, fmtNum(float64(v)))
		}
		for _, v := range r.Ratios {
			row = append(row, fmtNum(float64(v)))
		}
		rows = append(rows, row)
	}
	t.table(header, rows)
}

// renderCSV writes one row per (group, metric) with the describe columns.
func renderCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	header := []string{"group", "metric"}
	for _, s := range stats.StatNames {
		header = append(header, s.Key)
	}
	cw.Write(header)
	emit := func(key string, g *stats.Group) {
		for _, m := range []stats.Metrics{g.Metrics, g.Conversations.MetricsWithAliases()} {
			for _, d := range m {
				row := []string{key, d.Name}
				for _, s := range stats.StatNames {
					v, ok := d.Stat(s.Key)
					switch {
					case !ok || math.IsNaN(v):
						row = append(row, "")
					default:
						row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
					}
				}
				cw.Write(row)
			}
		}
	}
	emit("all", rep.Summary)
	for _, g := range rep.Groups {
		emit(rep.By+"="+g.Key, g)
	}
	cw.Flush()
	return cw.Error()
}

// fmtConversations counts conversations by how they ended, in mtrun's
// words (finished, failed, abandoned, unfinished).
func fmtConversations(c stats.ConvStats) string {
	if c.Finished == nil {
		return fmt.Sprintf("%d (%d without a failed request; how they ended is not in the records)", c.Count, c.WithoutFailure)
	}
	return fmt.Sprintf("%d (finished %d, failed %d, abandoned %d, unfinished %d)", c.Count, *c.Finished, *c.Failed, *c.Abandoned, *c.Unfinished)
}
