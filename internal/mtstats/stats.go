// Package mtstats is the mtstats program: it reads request records (Run,
// Options) into a report.Report, with the judge's verdicts and the
// server's metrics joined in, and writes it in the chosen formats. The
// mtstats command is a thin main around Run; other tools' tests call Run
// to read the records they wrote.
package mtstats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/vllmbook"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// Errors that map to distinct exit codes.
var (
	// ErrCheckFailed: --check was given and an SLO was not met.
	ErrCheckFailed = errors.New("SLO not met")
	// ErrSegmentsDisagree: --strict was given and the manifests of a
	// split run's segments disagree on a setting or the input.
	ErrSegmentsDisagree = errors.New("segments disagree")
	// ErrInterrupted: reading was interrupted; the summary of what was
	// read has been written.
	ErrInterrupted = errors.New("interrupted")
	// ErrNoRecords: no record was left to report on (empty input, or every
	// record a duplicate, warmup or filtered out); the reason has been
	// written to Options.Err and no report to Options.Out.
	ErrNoRecords = errors.New("no records to report")
)

// UsageError is a bad option value (an expression that does not parse, an
// unknown format): the tool exits as for a bad flag.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Options configure Run.
type Options struct {
	// Inputs are paths, "-" for stdin, or "label=path"; none means stdin.
	Inputs []string
	Stdin  io.Reader
	Out    io.Writer // report, or records with Records
	Err    io.Writer // diagnostics

	Format string // table (default), markdown, json, csv, llm-d
	// Version is mtstats's version, written in llm-d's report.
	Version string
	By      string // turn, conversation, client, phase, run, file or a record field
	// ByDetail is what each --by group shows: ByTable (default: one row
	// of the per-group table) or ByFull (the whole report per group,
	// implied by Compare, HTML, XLSX and UserGaps).
	ByDetail      string
	IncludeWarmup bool
	Strict        bool   // malformed lines are fatal
	Where         string // filter expression, see ParseFilter
	SLO           string // objectives, see ParseSLO
	Check         bool   // fail with ErrCheckFailed when an SLO is not met
	Compare       bool   // each label is one run, shown side by side

	Records bool   // pass filtered records through as JSONL instead of a report
	To      string // write filtered records to this file (.parquet, .jsonl[.gz|.zst])

	// Metrics is the series file of mtrun's scrapes of the server
	// (server.go); by default the one next to a single records input.
	Metrics   string
	NoMetrics bool

	// NoRetention skips the cache retention analysis (cache_retention),
	// as Only does: the report is otherwise the same.
	NoRetention bool

	HTML string // also write a self-contained HTML report here
	XLSX string // also write an Excel workbook here
	// XLSXLayout is XLSX's layout: "" or XLSXMtstats (the report's
	// figures, one row per record), XLSXVLLM or XLSXVLLMVerbose (vLLM's
	// --excel-output, see vllmbook; verbose adds the time between user
	// turns, as vLLM's --verbose does).
	XLSXLayout string
	// WarmupPercentages (vLLM's --warmup-percentages, see
	// vllmcompat.ParsePercentages) and XLSXParams (the Summary sheet's
	// parameter row; warmup_runtime_sec goes beside each runtime instead)
	// fill the vLLM layout.
	WarmupPercentages string
	XLSXParams        vllmcompat.Params
	Every             time.Duration

	// UserGaps adds the gap between consecutive turns of each client to
	// the describe table (usergap.go).
	UserGaps bool

	// Capacity is a sweep's capacity JSON (mtrun --capacity): with it the
	// records' stages are judged again, at its levels, with SLO (or its
	// objectives), and the capacity reported; below MinCapacity, Run
	// returns ErrCapacityNotReached (capacity.go).
	Capacity    string
	MinCapacity float64

	// Stop is closed on the first interrupt: a note is printed and
	// reading continues to the end of the input (the upstream stops too).
	// Cancelling Run's context (second interrupt) prints the summary of
	// what was read so far and returns ErrInterrupted.
	Stop <-chan struct{}

	// Only limits the report to these metrics (comma-separated, e.g.
	// "ttft,latency"), and the reading to their fields and those that
	// decide which records count: see docs/mtstats.md, --only.
	Only string
	// only is Only parsed.
	only []stats.Metric

	// allColumns turns column pruning off (tests compare the reports).
	allColumns bool
	// seriesIn is a server-metrics series piped on stdin (peekStdin),
	// read as Metrics (which is then "-").
	seriesIn io.Reader
}

// fullGroups reports whether the --by groups get the whole report.
func (o *Options) fullGroups() bool {
	return o.ByDetail == report.ByFull || o.Compare || o.HTML != "" || o.XLSX != "" || o.UserGaps
}

// The layouts of Options.XLSX.
const (
	XLSXMtstats     = "mtstats"
	XLSXVLLM        = "vllm"
	XLSXVLLMVerbose = "vllm-verbose"
)

// vllmLayout reports whether XLSX is written in vLLM's layout.
func (o *Options) vllmLayout() bool {
	return o.XLSXLayout == XLSXVLLM || o.XLSXLayout == XLSXVLLMVerbose
}

// checkLayout rejects an unknown --xlsx-layout, and the vLLM layout's
// settings without it.
func checkLayout(o *Options) error {
	switch o.XLSXLayout {
	case "", XLSXMtstats:
		switch {
		case o.WarmupPercentages != "":
			return errors.New("--warmup-percentages sets vLLM's workbook: it needs --xlsx-layout vllm")
		case len(o.XLSXParams) > 0:
			return errors.New("--xlsx-param sets vLLM's workbook: it needs --xlsx-layout vllm")
		}
	case XLSXVLLM, XLSXVLLMVerbose:
		if o.XLSX == "" {
			return fmt.Errorf("--xlsx-layout %s: no --xlsx FILE to write", o.XLSXLayout)
		}
		if _, err := vllmcompat.ParsePercentages(o.warmupPercentages()); err != nil {
			return fmt.Errorf("--warmup-percentages %q: %v", o.WarmupPercentages, err)
		}
	default:
		return fmt.Errorf("--xlsx-layout %s: want mtstats, vllm or vllm-verbose", o.XLSXLayout)
	}
	return nil
}

// warmupPercentages is WarmupPercentages, vLLM's default 0% when empty.
func (o *Options) warmupPercentages() string {
	if o.WarmupPercentages == "" {
		return "0%"
	}
	return o.WarmupPercentages
}

// Run reads the inputs and writes the report (or the records).
func Run(ctx context.Context, o Options) error {
	if err := checkLayout(&o); err != nil {
		return &UsageError{err}
	}
	switch o.Format {
	case "", report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV:
	case report.FormatLLMD:
		// One report per stage, each with the whole group's figures.
		if o.By != "" && o.By != "stage" || o.Compare || o.Every > 0 {
			return &UsageError{errors.New("--format llm-d writes one report per stage: it takes no --by, --compare or --every")}
		}
		o.By, o.ByDetail = "stage", report.ByFull
	default:
		return &UsageError{fmt.Errorf("--format %s: want table, markdown, json, csv or llm-d", o.Format)}
	}
	switch o.ByDetail {
	case "", report.ByTable, report.ByFull:
	default:
		return &UsageError{fmt.Errorf("--by-detail %s: want table or full", o.ByDetail)}
	}
	filter, err := stats.ParseFilter(o.Where)
	if err != nil {
		return &UsageError{err}
	}
	if o.only, err = stats.ParseOnly(o.Only); err != nil {
		return &UsageError{err}
	}
	if err := checkOnly(&o); err != nil {
		return &UsageError{err}
	}
	objs, err := judge.ParseSLO(o.SLO)
	if err != nil {
		return &UsageError{err}
	}
	capIn, stageObjs, err := readCapacity(&o, objs)
	if err != nil {
		return err
	}
	if o.Check && len(objs) == 0 && capIn == nil {
		return errors.New("--check needs --slo")
	}
	var series []string
	if o.Inputs, series, err = ExpandInputs(o.Inputs); err != nil { // expand.go
		return err
	}
	if o.Stdin != nil && readsStdin(o.Inputs) {
		in, release, k, err := peekStdinCtx(ctx, o.Stdin)
		if err != nil {
			return err
		}
		defer release()
		if k == kindSeries {
			o.Inputs = slices.DeleteFunc(o.Inputs, isStdin)
			series, o.seriesIn = append(series, "-"), in
		} else {
			o.Stdin = in
		}
	}
	if err := useSeries(&o, series); err != nil {
		return err
	}
	fs := &record.Files{Paths: o.Inputs, Stdin: o.Stdin}
	if o.Records || o.To != "" {
		defer fs.Close()
		return runRecords(fs, &o, filter)
	}
	if o.Compare {
		if o.By != "" && o.By != "file" {
			return errors.New("--compare groups by input; it cannot be combined with --by")
		}
		o.By = "file"
		if len(o.Inputs) < 2 {
			return errors.New("--compare needs at least two inputs (label=path)")
		}
		if capIn != nil {
			return &UsageError{errors.New("--capacity judges one sweep at its file's levels; --compare judges each input's stages at their records' stage_load")}
		}
	}
	if o.only != nil {
		o.NoMetrics = true // the server section is not part of --only's report
	}
	o.pairSeries()
	c, err := newCollector(&o, filter, objs)
	if err != nil {
		return err
	}
	if fs.Columns, err = columns(&o, filter); err != nil {
		return err
	}
	c.stages, c.capacity = judge.NewStages(stageObjs), capIn
	done := make(chan error, 1)
	go func() { done <- c.read(fs) }()
	var tick <-chan time.Time
	if o.Every > 0 {
		t := time.NewTicker(o.Every)
		defer t.Stop()
		tick = t.C
	}
	stop := o.Stop
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			return c.finish(objs, false)
		case <-tick:
			c.mu.Lock()
			retain := c.startRetention()
			rep := c.report(objs, o.Compare)
			retain(rep)
			rep.Live = true
			err := report.Render(o.Out, rep, o.Format)
			c.mu.Unlock()
			if err != nil {
				return err
			}
		case <-stop:
			stop = nil
			fmt.Fprintln(o.Err, "interrupted: reading to the end of the input (interrupt again to stop now)")
		case <-ctx.Done():
			if err := c.finish(objs, true); err != nil {
				return err
			}
			return ErrInterrupted
		}
	}
}

// finish writes the final report and the HTML and XLSX files.
func (c *collector) finish(objs []judge.Objective, partial bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	o := c.opts
	retain := c.startRetention()
	rep := c.report(objs, o.Compare)
	rep.Partial = partial
	err := c.attachServer(rep)
	retain(rep) // also on error: the analysis must end before c.mu is released
	if err != nil {
		return err
	}
	if c.in.Duplicates > 0 {
		fmt.Fprintf(o.Err, "%d duplicate records (same run_id, shard, seq) counted once\n", c.in.Duplicates)
	}
	if c.in.Malformed > 0 {
		fmt.Fprintf(o.Err, "%d malformed lines skipped\n", c.in.Malformed)
	}
	if o.vllmLayout() {
		// Before the check for records: with none, vLLM's workbook still
		// holds the parameter row, as mtrun --excel-output's always did.
		if err := c.writeVLLM(); err != nil {
			return err
		}
		// That workbook is the result: no records is success here.
		if why := c.noRecords(); why != "" {
			fmt.Fprintln(o.Err, why)
			return nil
		}
	}
	if why := c.noRecords(); why != "" {
		fmt.Fprintln(o.Err, why)
		if partial {
			return nil
		}
		return ErrNoRecords
	}
	if err := report.Render(o.Out, rep, o.Format); err != nil {
		return err
	}
	if o.HTML != "" {
		if err := writeFile(o.HTML, func(w io.Writer) error { return report.WriteHTML(w, rep) }); err != nil {
			return err
		}
	}
	if o.XLSX != "" && !o.vllmLayout() {
		if err := report.WriteXLSX(o.XLSX, rep); err != nil {
			return err
		}
	}
	if rep.Segments != nil {
		for _, r := range rep.Segments.Runs {
			if len(r.Disagree) == 0 {
				continue
			}
			var what []string
			for _, d := range r.Disagree {
				what = append(what, d.String())
			}
			msg := fmt.Sprintf("run %s: the segments' manifests disagree (%s): they are not parts of one run", r.RunID, strings.Join(what, "; "))
			if o.Strict {
				return fmt.Errorf("%w: %s", ErrSegmentsDisagree, msg)
			}
			fmt.Fprintf(o.Err, "warning: %s\n", msg)
		}
	}
	if o.Check && !rep.SLOMet() {
		return ErrCheckFailed
	}
	if rep.Capacity != nil && rep.Capacity.Capacity < o.MinCapacity {
		return fmt.Errorf("%w: %g %s, want at least %g", ErrCapacityNotReached, rep.Capacity.Capacity, rep.Capacity.Kind, o.MinCapacity)
	}
	return nil
}

// noRecords says why no record is left to report on, or returns "" when
// some is.
func (c *collector) noRecords() string {
	in := &c.in
	if in.Records == 0 {
		return "no records in the input: nothing to report"
	}
	if in.Records > in.Duplicates+in.Warmup+in.FilteredOut {
		return ""
	}
	var why []string
	if in.Duplicates > 0 {
		why = append(why, fmt.Sprintf("%d duplicates", in.Duplicates))
	}
	if in.Warmup > 0 {
		why = append(why, fmt.Sprintf("%d warmup (--include-warmup counts them)", in.Warmup))
	}
	if in.FilteredOut > 0 {
		why = append(why, fmt.Sprintf("%d not matching --where", in.FilteredOut))
	}
	return fmt.Sprintf("no records to report: %d read, %s", in.Records, strings.Join(why, ", "))
}

func writeFile(path string, write func(io.Writer) error) error {
	out, err := iox.Create(path, nil)
	if err != nil {
		return err
	}
	if err := write(out); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return out.Close()
}

// runRecords copies the filtered records to o.To or, as JSONL, to o.Out.
func runRecords(fs *record.Files, o *Options, filter stats.Filter) error {
	var (
		enc record.Encoder
		out *iox.Output
		err error
	)
	dest := o.To
	if dest == "" {
		dest = "-"
	}
	out, err = iox.Create(dest, o.Out)
	if err != nil {
		return err
	}
	switch {
	case strings.HasSuffix(dest, ".parquet"):
		enc = record.NewParquetEncoder(out)
	case dest == "-":
		enc = record.NewJSONEncoder(out) // flushed per record: live pipes
	default:
		enc = record.NewJSONEncoder(struct{ io.Writer }{out}) // buffered
	}
	in, err := passThrough(fs, o, filter, enc)
	if cerr := enc.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if cerr := out.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if in.Duplicates > 0 {
		fmt.Fprintf(o.Err, "%d duplicate records (same run_id, shard, seq) dropped\n", in.Duplicates)
	}
	if in.Malformed > 0 {
		fmt.Fprintf(o.Err, "%d malformed lines skipped\n", in.Malformed)
	}
	return nil
}

// checkOnly rejects the options a report limited to some metrics cannot
// serve: they need figures --only leaves out.
func checkOnly(o *Options) error {
	if o.Only == "" {
		return nil
	}
	for _, c := range []struct {
		set  bool
		name string
	}{
		{o.HTML != "", "--html"}, {o.XLSX != "", "--xlsx"}, {o.SLO != "", "--slo"},
		{o.Capacity != "", "--capacity"}, {o.UserGaps, "--user-gaps"},
		{o.Records || o.To != "", "--to"}, {o.ByDetail == report.ByFull, "--by-detail full"},
		{o.Metrics != "", "--metrics-file"},
	} {
		if c.set {
			return fmt.Errorf("--only limits the report to some metrics; %s needs the whole report", c.name)
		}
	}
	return nil
}

// writeVLLM writes XLSX in vLLM's layout from the requests kept.
func (c *collector) writeVLLM() error {
	o := c.opts
	warmup, _ := vllmcompat.ParsePercentages(o.warmupPercentages()) // checkLayout parsed it
	wb := &vllmbook.Workbook{Warmup: warmup, Verbose: o.XLSXLayout == XLSXVLLMVerbose, Requests: c.vllm}
	for _, p := range o.XLSXParams {
		if p.Name != vllmcompat.WarmupRuntimeParam {
			wb.Params = append(wb.Params, p)
			continue
		}
		sec, ok := p.Number()
		if !ok {
			return &UsageError{fmt.Errorf("--xlsx-param %s: want a number of seconds", p)}
		}
		wb.WarmupRuntimeSec = &sec
	}
	return vllmbook.WriteXLSX(o.XLSX, wb)
}
