package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// agreeRel is the largest relative difference allowed between a number
// of mtstats and the same number computed by DuckDB.
const agreeRel = 1e-9

// parquetTimeSlack is the absolute slack on runtime_sec read from
// Parquet: DuckDB reads Parquet timestamps adjusted to UTC as TIMESTAMPTZ
// with microsecond precision (duckdb/duckdb#13325, #9852), so min(start)
// and max(end) each lose up to 1 µs.
const parquetTimeSlack = 2e-6

// summaryMetrics are the describe rows of mtstats' default summary and
// the SQL expression of each one's value in nanoseconds or count, with
// the condition on top of "a successful, measured, not retried request"
// (internal/stats/acc.go).
var summaryMetrics = []struct {
	name  string
	expr  string
	scale float64 // divisor to mtstats' unit
	list  bool    // one value per element of a list column
}{
	{"ttft_ms", "ttft_ns", 1e6, false},
	{"tpot_ms", "tpot_ns", 1e6, false},
	{"itl_ms", "itl_ns", 1e6, true},
	{"latency_ms", "latency_ns", 1e6, false},
	{"input_num_turns", "input_messages", 1, false},
	{"input_num_tokens", "coalesce(prompt_tokens, client_prompt_tokens)", 1, false},
	{"output_num_tokens", "coalesce(completion_tokens, client_completion_tokens)", 1, false},
	{"output_num_chunks", "chunks", 1, false},
	{"intended_latency_ms", "intended_latency_ns", 1e6, false},
	{"lateness_ms", "lateness_ns", 1e6, false},
	{"client_wait_ms", "client_wait_ns", 1e6, false},
}

// summaryQuantiles are the quantiles of every describe row, with their
// mtstats JSON names; the ITL row also has p99.9.
var summaryQuantiles = []struct {
	name string
	p    float64
}{{"p25", 0.25}, {"p50", 0.5}, {"p75", 0.75}, {"p90", 0.9}, {"p99", 0.99}}

// okCond selects the requests whose samples mtstats describes: measured
// (not warmup), the last attempt (not retried), successful. mtstats also
// drops duplicate (run_id, shard, seq) keys; the generated records have
// none, and the request counts compared below would show it otherwise.
const (
	measuredCond = `phase <> 'warmup'`
	okCond       = `NOT retried AND error_class = ''`
)

// summarySQL is the query that answers mtstats' default summary from
// src (a DuckDB table function call): request counts, runtime, token
// totals, cache hit rate and the describe table (count, mean, std, min,
// quantiles, max) of every metric, quantiles on the integer columns
// (quantile_cont interpolates as pandas does) converted at the end.
func summarySQL(src string) string { return summarySQLOf(false)(src) }

// summarySQLOf is summarySQL, without the ITL row when noITL (records of
// requests that were not streamed have no gaps).
func summarySQLOf(noITL bool) func(src string) string {
	return func(src string) string { return buildSummarySQL(src, noITL) }
}

func buildSummarySQL(src string, noITL bool) string {
	var agg, outer []string
	col := func(alias, expr string) {
		agg = append(agg, expr+" AS "+alias)
		outer = append(outer, alias+` AS "summary.`+strings.TrimPrefix(alias, "s_")+`"`)
	}
	col("s_requests", "count(*) FILTER (WHERE NOT retried)")
	col("s_ok", "count(*) FILTER (WHERE "+okCond+")")
	col("s_failed", "count(*) FILTER (WHERE NOT retried AND error_class <> '')")
	col("s_retries", "count(*) FILTER (WHERE retried)")
	col("s_runtime_sec", `(epoch_ns(max("end")) - epoch_ns(min(start))) / 1e9`)
	col("s_input_tokens", "sum(coalesce(prompt_tokens, client_prompt_tokens)) FILTER (WHERE "+okCond+")")
	col("s_output_tokens", "sum(coalesce(completion_tokens, client_completion_tokens)) FILTER (WHERE "+okCond+")")
	cache := okCond + " AND cached_tokens IS NOT NULL AND prompt_tokens IS NOT NULL"
	col("s_cache_hit_rate", "sum(cached_tokens) FILTER (WHERE "+cache+") / sum(prompt_tokens) FILTER (WHERE "+cache+")")
	col("s_cache_reported_requests", "count(*) FILTER (WHERE "+cache+")")
	var lists []string
	for i, m := range summaryMetrics {
		if m.list && noITL {
			continue
		}
		if m.list {
			lists = append(lists, describeSQL(src, i))
			continue
		}
		cond := okCond + " AND " + m.expr + " IS NOT NULL"
		agg = append(agg, describeAgg(fmt.Sprintf("m%d", i), m.expr, cond)...)
		outer = append(outer, describeOuter(fmt.Sprintf("m%d", i), i, "summary.metrics."+m.name)...)
	}
	for i := range lists {
		outer = append(outer, fmt.Sprintf("l%d.*", i))
	}
	q := "SELECT " + strings.Join(outer, ",\n  ") + "\nFROM (SELECT " + strings.Join(agg, ",\n    ") +
		"\n  FROM " + src + " WHERE " + measuredCond + ") AS a"
	for i, l := range lists {
		q += fmt.Sprintf(",\n(%s) AS l%d", l, i)
	}
	return q + ";\n"
}

// describeAgg is the aggregates of one describe row over expr where cond.
func describeAgg(prefix, expr, cond string) []string {
	f := " FILTER (WHERE " + cond + ")"
	ps := make([]string, len(summaryQuantiles)+1)
	for i, q := range summaryQuantiles {
		ps[i] = strconv.FormatFloat(q.p, 'g', -1, 64)
	}
	ps[len(ps)-1] = "0.999"
	return []string{
		"count(" + expr + ")" + f + " AS " + prefix + "_count",
		"avg(" + expr + ")" + f + " AS " + prefix + "_mean",
		"stddev_samp(" + expr + ")" + f + " AS " + prefix + "_std",
		"min(" + expr + ")" + f + " AS " + prefix + "_min",
		"max(" + expr + ")" + f + " AS " + prefix + "_max",
		"quantile_cont(" + expr + ", [" + strings.Join(ps, ", ") + "])" + f + " AS " + prefix + "_q",
	}
}

// describeOuter converts one describe row's aggregates to mtstats' unit
// under its JSON path.
func describeOuter(prefix string, metric int, path string) []string {
	m := summaryMetrics[metric]
	div := ""
	if m.scale != 1 {
		div = " / " + strconv.FormatFloat(m.scale, 'g', -1, 64)
	}
	out := []string{
		prefix + `_count AS "` + path + `.count"`,
		prefix + "_mean" + div + ` AS "` + path + `.mean"`,
		prefix + "_std" + div + ` AS "` + path + `.std"`,
		prefix + "_min" + div + ` AS "` + path + `.min"`,
		prefix + "_max" + div + ` AS "` + path + `.max"`,
	}
	for i, q := range summaryQuantiles {
		out = append(out, fmt.Sprintf(`%s_q[%d]%s AS "%s.%s"`, prefix, i+1, div, path, q.name))
	}
	if m.list {
		out = append(out, fmt.Sprintf(`%s_q[%d]%s AS "%s.p99.9"`, prefix, len(summaryQuantiles)+1, div, path))
	}
	return out
}

// describeSQL is the subquery describing a list column (ITL): its
// elements over the successful measured requests.
func describeSQL(src string, metric int) string {
	m := summaryMetrics[metric]
	p := fmt.Sprintf("m%d", metric)
	return "SELECT " + strings.Join(describeOuter(p, metric, "summary.metrics."+m.name), ", ") +
		" FROM (SELECT " + strings.Join(describeAgg(p, "g", "true"), ", ") +
		" FROM (SELECT unnest(" + m.expr + ") AS g FROM " + src + " WHERE " + measuredCond + " AND " + okCond + "))"
}

// byTurnSQL answers mtstats --by turn's TTFT p50, p90 and p99 per turn.
func byTurnSQL(src string) string {
	return `SELECT turn AS key, count(ttft_ns) AS "count", quantile_cont(ttft_ns, [0.5, 0.9, 0.99]) AS q
FROM ` + src + ` WHERE ` + measuredCond + ` AND ` + okCond + ` AND ttft_ns IS NOT NULL GROUP BY turn ORDER BY turn;
`
}

// duckSource is the DuckDB table function reading a record file as mtrun
// writes it: a directory of Parquet parts, or JSONL with the columns the
// queries use (timestamps as TIMESTAMP_NS, which keeps nanoseconds).
func duckSource(path string) string {
	q := "'" + strings.ReplaceAll(path, "'", "''")
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return "read_parquet(" + q + "/*.parquet')"
	}
	cols := []string{"phase:'VARCHAR'", "retried:'BOOLEAN'", "error_class:'VARCHAR'", "turn:'BIGINT'",
		"start:'TIMESTAMP_NS'", `"end":'TIMESTAMP_NS'`, "ttft_ns:'BIGINT'", "tpot_ns:'DOUBLE'", "itl_ns:'BIGINT[]'",
		"latency_ns:'BIGINT'", "intended_latency_ns:'BIGINT'", "lateness_ns:'BIGINT'", "client_wait_ns:'BIGINT'", "input_messages:'BIGINT'",
		"prompt_tokens:'BIGINT'", "client_prompt_tokens:'BIGINT'", "completion_tokens:'BIGINT'",
		"client_completion_tokens:'BIGINT'", "cached_tokens:'BIGINT'", "chunks:'BIGINT'"}
	return "read_json(" + q + "', format='newline_delimited', columns={" + strings.Join(cols, ", ") + "})"
}

// flattenJSON maps every number (and null) under v to its dotted path;
// null becomes NaN. Strings that hold numbers (DuckDB renders big
// integers as strings) count as numbers.
func flattenJSON(v any, path string, out map[string]float64) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flattenJSON(e, p, out)
		}
	case []any:
		for i, e := range x {
			flattenJSON(e, path+"."+strconv.Itoa(i), out)
		}
	case float64:
		out[path] = x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			out[path] = f
		}
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			out[path] = f
		}
	case nil:
		out[path] = math.NaN()
	}
}

// mtstatsSummary extracts from mtstats --format json the numbers that
// summarySQL computes.
func mtstatsSummary(doc []byte) (map[string]float64, error) { return parseMtstatsSummary(doc, false) }

// mtstatsSummaryOf is mtstatsSummary, without the ITL row when noITL.
func mtstatsSummaryOf(noITL bool) func([]byte) (map[string]float64, error) {
	return func(doc []byte) (map[string]float64, error) { return parseMtstatsSummary(doc, noITL) }
}

func parseMtstatsSummary(doc []byte, noITL bool) (map[string]float64, error) {
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("mtstats JSON: %w", err)
	}
	all := map[string]float64{}
	flattenJSON(v["summary"], "summary", all)
	want := []string{"requests", "ok", "failed", "retries", "runtime_sec", "input_tokens", "output_tokens", "cache_hit_rate", "cache_reported_requests"}
	out := map[string]float64{}
	for _, k := range want {
		out["summary."+k] = math.NaN()
	}
	for _, m := range summaryMetrics {
		if m.list && noITL {
			continue
		}
		stats := []string{"count", "mean", "std", "min", "max"}
		for _, q := range summaryQuantiles {
			stats = append(stats, q.name)
		}
		if m.list {
			stats = append(stats, "p99.9")
		}
		for _, s := range stats {
			out["summary.metrics."+m.name+"."+s] = math.NaN()
		}
	}
	var missing []string
	for k := range out {
		x, ok := all[k]
		if !ok {
			missing = append(missing, k)
			continue
		}
		out[k] = x
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		more := ""
		if len(missing) > 4 {
			more = fmt.Sprintf(" (and %d more)", len(missing)-4)
			missing = missing[:4]
		}
		return nil, fmt.Errorf("mtstats JSON: no %s%s", strings.Join(missing, ", "), more)
	}
	return out, nil
}

// duckRows parses duckdb.mjs output (a JSON array of row objects).
func duckRows(doc []byte) ([]map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var rows []map[string]any
	if err := d.Decode(&rows); err != nil {
		return nil, fmt.Errorf("DuckDB output: %w", err)
	}
	return rows, nil
}

// duckSummary is summarySQL's one row as path → number.
func duckSummary(doc []byte) (map[string]float64, error) {
	rows, err := duckRows(doc)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("DuckDB summary: %d rows, want 1", len(rows))
	}
	out := map[string]float64{}
	for k, v := range rows[0] {
		flattenJSON(v, k, out) // keys are whole paths: flatten only converts the value
	}
	return out, nil
}

// mtstatsByTurn extracts TTFT count, p50, p90 and p99 of every --by turn
// group that has TTFT samples.
func mtstatsByTurn(doc []byte) (map[string]float64, error) {
	var v struct {
		Groups []struct {
			Key     string `json:"key"`
			Metrics map[string]map[string]any
		} `json:"groups"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("mtstats --by turn JSON: %w", err)
	}
	if len(v.Groups) == 0 {
		return nil, errors.New("mtstats --by turn JSON: no groups")
	}
	out := map[string]float64{}
	for _, g := range v.Groups {
		t, ok := g.Metrics["ttft_ms"]
		if !ok {
			return nil, fmt.Errorf("mtstats --by turn JSON: group %q: no metrics.ttft_ms", g.Key)
		}
		n, _ := t["count"].(float64)
		if n == 0 {
			continue
		}
		for _, s := range []string{"count", "p50", "p90", "p99"} {
			x, ok := t[s].(float64)
			if !ok {
				return nil, fmt.Errorf("mtstats --by turn JSON: group %q: ttft_ms.%s is not a number", g.Key, s)
			}
			out["turn "+g.Key+".ttft_ms."+s] = x
		}
	}
	return out, nil
}

// duckByTurn is byTurnSQL's rows in mtstatsByTurn's shape.
func duckByTurn(doc []byte) (map[string]float64, error) {
	rows, err := duckRows(doc)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for i, r := range rows {
		key := fmt.Sprint(r["key"])
		q, ok := r["q"].([]any)
		if !ok || len(q) != 3 {
			return nil, fmt.Errorf("DuckDB --by turn: row %d: q is %v, want 3 quantiles", i+1, r["q"])
		}
		vals := map[string]any{"count": r["count"], "p50": q[0], "p90": q[1], "p99": q[2]}
		for s, v := range vals {
			f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
			if err != nil {
				return nil, fmt.Errorf("DuckDB --by turn: row %d: %s: %w", i+1, s, err)
			}
			if s != "count" {
				f /= 1e6
			}
			out["turn "+key+".ttft_ms."+s] = f
		}
	}
	return out, nil
}

// slack is the allowed absolute difference of one number, beyond the
// relative agreeRel.
type slack map[string]float64

// agree checks that mt and db hold the same keys with the same numbers
// (relative difference at most agreeRel, or within slack[key]; NaN only
// equals NaN). It returns how many numbers it compared.
func agree(mt, db map[string]float64, sl slack) (int, error) {
	var bad []string
	keys := make([]string, 0, len(mt))
	for k := range mt {
		keys = append(keys, k)
	}
	for k := range db {
		if _, ok := mt[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		a, ok1 := mt[k]
		b, ok2 := db[k]
		switch {
		case !ok1:
			bad = append(bad, fmt.Sprintf("%s: only DuckDB has it (%v)", k, b))
		case !ok2:
			bad = append(bad, fmt.Sprintf("%s: only mtstats has it (%v)", k, a))
		case math.IsNaN(a) || math.IsNaN(b):
			if !math.IsNaN(a) || !math.IsNaN(b) {
				bad = append(bad, fmt.Sprintf("%s: mtstats %v, DuckDB %v", k, a, b))
			}
		default:
			d := math.Abs(a - b)
			if d > agreeRel*max(math.Abs(a), math.Abs(b)) && d > sl[k] {
				bad = append(bad, fmt.Sprintf("%s: mtstats %.17g, DuckDB %.17g (relative difference %.3g)", k, a, b, d/max(math.Abs(a), math.Abs(b))))
			}
		}
	}
	if len(bad) > 0 {
		const show = 12
		more := ""
		if len(bad) > show {
			more = fmt.Sprintf(" (and %d more)", len(bad)-show)
			bad = bad[:show]
		}
		return len(keys), fmt.Errorf("mtstats and DuckDB disagree on %d of %d numbers%s:\n  %s", len(bad), len(keys), more, strings.Join(bad, "\n  "))
	}
	if len(keys) == 0 {
		return 0, errors.New("mtstats and DuckDB: no numbers to compare")
	}
	return len(keys), nil
}

// statsQuestion is one question mtstats and DuckDB both answer.
type statsQuestion struct {
	name   string // e.g. "summary, Parquet"
	input  string // record file or Parquet directory
	args   []string
	sql    func(src string) string
	mt, db func([]byte) (map[string]float64, error)
	slack  slack
}

// statsQuestions are the side-by-side questions on one record set, as
// JSONL, as Parquet, and as Parquet without ITL gaps.
func statsQuestions(jsonl, parquet, noITL string) []statsQuestion {
	pq := slack{"summary.runtime_sec": parquetTimeSlack}
	return []statsQuestion{
		{"default summary, Parquet", parquet, nil, summarySQL, mtstatsSummary, duckSummary, pq},
		{"default summary, JSONL", jsonl, nil, summarySQL, mtstatsSummary, duckSummary, nil},
		{"default summary, Parquet without ITL (not streamed)", noITL, nil, summarySQLOf(true), mtstatsSummaryOf(true), duckSummary, pq},
		{"--by turn TTFT p50/p90/p99, Parquet", parquet, []string{"--by", "turn", "--only", "ttft"}, byTurnSQL, mtstatsByTurn, duckByTurn, nil},
		{"--by turn TTFT p50/p90/p99, JSONL", jsonl, []string{"--by", "turn", "--only", "ttft"}, byTurnSQL, mtstatsByTurn, duckByTurn, nil},
	}
}

// duckdbReady runs a trivial query; the error says why DuckDB cannot be
// used.
func (b *bench) duckdbReady(ctx context.Context, dir string) error {
	if _, err := os.Stat(b.duckdbScript); err != nil {
		return fmt.Errorf("%s: %w", b.duckdbScript, err)
	}
	sql := filepath.Join(dir, "ready.sql")
	if err := os.WriteFile(sql, []byte("SELECT 42 AS x;"), 0o644); err != nil {
		return err
	}
	out := filepath.Join(dir, "ready.json")
	if _, err := runProc(ctx, "node", []string{b.duckdbScript}, runOpts{stdin: sql, stdout: out}); err != nil {
		return fmt.Errorf("DuckDB (node %s; scripts/fixtures.sh installs it): %w", b.duckdbScript, err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Contains(got, []byte("42")) {
		return fmt.Errorf("DuckDB: SELECT 42 gave %q", got)
	}
	return nil
}

// sideBySide measures one question at cores (1 or 2) once: both tools,
// in the order given, and checks that their numbers agree.
func (b *bench) sideBySide(ctx context.Context, dir string, q statsQuestion, cores int, duckFirst bool) (mt, db *proc, compared int, err error) {
	mtBin := b.bin("mtstats")
	mtArgs := append(append([]string{"--format", "json"}, q.args...), q.input)
	sql := q.sql(duckSource(q.input))
	var env []string
	if cores == 1 {
		sql = "SET threads = 1;\n" + sql
		env = []string{"GOMAXPROCS=1"}
	}
	sqlFile := filepath.Join(dir, "question.sql")
	if err := os.WriteFile(sqlFile, []byte(sql), 0o644); err != nil {
		return nil, nil, 0, err
	}
	mtOut, dbOut := filepath.Join(dir, "mtstats.json"), filepath.Join(dir, "duckdb.json")
	pin := func(bin string, args []string) (string, []string) {
		if cores == 1 {
			return "taskset", append([]string{"-c", "0", bin}, args...)
		}
		return bin, args
	}
	runMt := func() error {
		bin, args := pin(mtBin, mtArgs)
		mt, err = runProc(ctx, bin, args, runOpts{stdout: mtOut, env: env})
		return err
	}
	runDB := func() error {
		bin, args := pin("node", []string{b.duckdbScript})
		db, err = runProc(ctx, bin, args, runOpts{stdin: sqlFile, stdout: dbOut})
		return err
	}
	order := []func() error{runMt, runDB}
	if duckFirst {
		order[0], order[1] = order[1], order[0]
	}
	for _, f := range order {
		if err := f(); err != nil {
			return nil, nil, 0, err
		}
	}
	mtDoc, err := os.ReadFile(mtOut)
	if err != nil {
		return nil, nil, 0, err
	}
	dbDoc, err := os.ReadFile(dbOut)
	if err != nil {
		return nil, nil, 0, err
	}
	mtNums, err := q.mt(mtDoc)
	if err != nil {
		return nil, nil, 0, err
	}
	dbNums, err := q.db(dbDoc)
	if err != nil {
		return nil, nil, 0, err
	}
	compared, err = agree(mtNums, dbNums, q.slack)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s (%s, SQL in %s): %w", q.name, q.input, sqlFile, err)
	}
	return mt, db, compared, nil
}

// toolDuckDB runs every question with mtstats and DuckDB side by side on
// the same files, at 2 cores and at 1, interleaved, and publishes each
// tool's wall time, CPU time and max RSS with the ratios and their
// targets.
// rate, when not nil, gets the wall time of mtstats' 2-core runs of
// each question; without DuckDB, mtstats runs alone to give it.
func (b *bench) toolDuckDB(ctx context.Context, dir string, files recordFiles, n int, rate func(question string, wall time.Duration)) error {
	const sec = "vs DuckDB"
	qs := statsQuestions(files.jsonl, files.parquet, files.noITL)
	figName := func(q statsQuestion, cores int, what string) string {
		c := "2 cores"
		if cores == 1 {
			c = "1 core"
		}
		return fmt.Sprintf("%s, %s: %s", q.name, c, what)
	}
	type measure struct {
		what, unit string
		t          *target
		val        func(*proc) float64
	}
	measures := []measure{
		{"wall", "s", atMost(1), func(p *proc) float64 { return p.Wall.Seconds() }},
		{"CPU", "s", atMost(1), func(p *proc) float64 { return p.CPU.Seconds() }},
		{"max RSS", "MB", atMost(2), func(p *proc) float64 { return float64(p.MaxRSS) / 1e6 }},
	}
	each := func(f func(q statsQuestion, cores int, m measure)) {
		for _, q := range qs {
			for _, cores := range []int{2, 1} {
				for _, m := range measures {
					f(q, cores, m)
				}
			}
		}
	}
	if b.bin("mtstats") == "" {
		each(func(q statsQuestion, cores int, m measure) {
			b.figs.na(sec, figName(q, cores, m.what+" mtstats/DuckDB"), "ratio", m.t, "mtstats missing")
		})
		return nil
	}
	if err := b.duckdbReady(ctx, dir); err != nil {
		if b.requireDuckDB {
			return fmt.Errorf("--require-duckdb: %w", err)
		}
		b.logf("DuckDB figures n/a: %v", err)
		each(func(q statsQuestion, cores int, m measure) {
			b.figs.na(sec, figName(q, cores, m.what+" mtstats/DuckDB"), "ratio", m.t, "DuckDB not installed (scripts/fixtures.sh)")
		})
		for range b.runs {
			for _, q := range qs {
				p, err := runProc(ctx, b.bin("mtstats"), append(append([]string{"--format", "json"}, q.args...), q.input), runOpts{stdout: os.DevNull})
				if err != nil {
					return err
				}
				if rate != nil {
					rate(q.name, p.Wall)
				}
			}
		}
		return nil
	}
	for run := range b.runs {
		for qi, q := range qs {
			for _, cores := range []int{2, 1} {
				duckFirst := (run+qi+cores)%2 == 1
				mt, db, compared, err := b.sideBySide(ctx, dir, q, cores, duckFirst)
				if err != nil {
					return err
				}
				b.logf("%s: mtstats %v CPU %v RSS %.0f MB | DuckDB %v CPU %v RSS %.0f MB | %d numbers agree",
					figName(q, cores, "run "+strconv.Itoa(run+1)), mt.Wall.Round(time.Millisecond), mt.CPU.Round(time.Millisecond), float64(mt.MaxRSS)/1e6,
					db.Wall.Round(time.Millisecond), db.CPU.Round(time.Millisecond), float64(db.MaxRSS)/1e6, compared)
				for _, m := range measures {
					b.figs.add(sec, figName(q, cores, m.what+" mtstats"), m.unit, nil, m.val(mt))
					b.figs.add(sec, figName(q, cores, m.what+" DuckDB"), m.unit, nil, m.val(db))
					b.figs.add(sec, figName(q, cores, m.what+" mtstats/DuckDB"), "ratio", m.t, m.val(mt)/m.val(db))
				}
				b.figs.add(sec, figName(q, cores, "numbers agreeing to 1e-9"), "", nil, float64(compared))
				if cores == 2 && rate != nil {
					rate(q.name, mt.Wall)
				}
			}
		}
	}
	b.figs.note(sec, figName(qs[0], 2, "wall mtstats/DuckDB"), fmt.Sprintf(
		"%s generated records (warmup, retries, failures, one ITL gap per output token), the same file for both tools; "+
			"mtstats --format json vs DuckDB %s via node scripts/duckdb/duckdb.mjs (node's start-up counted as DuckDB's); "+
			"1 core = taskset -c 0 for both, GOMAXPROCS=1, SET threads = 1; ratios are per interleaved pair, medians over runs; "+
			"every run checks that both answers agree to 1e-9 relative (runtime_sec from Parquet to 2 µs: DuckDB reads its ns timestamps as µs)",
		thousands(int64(n)), duckdbVersion))
	return nil
}

// duckdbVersion is the DuckDB package scripts/fixtures.sh installs.
const duckdbVersion = "@duckdb/node-api 1.5.6-r.1"
