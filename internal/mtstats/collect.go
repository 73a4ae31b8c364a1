package mtstats

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/retention"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/vllmcompat"
	"github.com/mtkit/mtkit/internal/workbook"
)

// maxReported is how many malformed lines are printed before the rest are
// only counted.
const maxReported = 100

// collector reads records into accumulators: the whole input, the --by
// groups and, when needed, each turn.
type collector struct {
	opts    *Options
	filter  stats.Filter
	slo     *judge.Checker
	groupBy func(r *record.Record, label string) string
	// groupInt is the group key of --by turn and --by client as an int;
	// byInt holds the groups of small non-negative keys by key, so that
	// most records find theirs without a string key and a map lookup.
	groupInt func(r *record.Record) int
	byInt    []*stats.Acc
	// liteGroups: the groups keep only the per-group table's figures.
	liteGroups bool
	// fromGroups are the metrics whose samples only the --by groups keep:
	// the summary's are their union.
	fromGroups []stats.Metric

	mu      sync.Mutex
	stopped bool
	all     *stats.Acc
	groups  map[string]*stats.Acc
	turns   map[int]*stats.Acc
	// groupTurns is each group's turns, for the HTML report of --compare.
	groupTurns map[string]map[int]*stats.Acc
	aff        *stats.AffinityAcc
	dedup      stats.Dedup
	in         stats.Inputs
	files      map[string]*stats.FileStats
	// lastFile is the FileStats of the last record: records come in runs
	// of one input.
	lastFile *stats.FileStats
	raw      [][]any                  // rows of the XLSX "Raw data" sheet
	vllm     []vllmcompat.Request     // the rows of vLLM's layout of XLSX
	segs     *stats.Segments          // segments.go
	stages   *judge.Stages            // records of staged runs and sweeps, per stage (stages.go)
	stagesBy map[string]*judge.Stages // --compare: each input's stages
	capacity *judge.CapacityFile      // --capacity (capacity.go)
	// ret is the cache retention pass over every record but duplicates,
	// retBy each --compare input's; both nil with --only and
	// --no-retention.
	ret   *retention.Pass
	retBy map[string]*retention.Pass
	// records is what the records say of their runs, kept for llm-d's
	// report (nil for the other formats).
	records *report.RecordInfo
}

func newCollector(o *Options, filter stats.Filter, objs []judge.Objective) (*collector, error) {
	c := &collector{opts: o, filter: filter, all: stats.NewAcc(o.HTML != "" || o.Metrics != ""), groups: map[string]*stats.Acc{}, files: map[string]*stats.FileStats{}, aff: stats.NewAffinityAcc(), segs: stats.NewSegments(o.Err)}
	c.withGaps(c.all)
	if o.only != nil {
		c.all = stats.NewOnlyAcc(o.only)
	}
	if len(objs) > 0 {
		c.slo = &judge.Checker{Objs: objs}
	}
	needTurns := o.HTML != "" || o.XLSX != ""
	for _, ob := range objs {
		needTurns = needTurns || ob.Turn >= 0
	}
	if needTurns {
		c.turns = map[int]*stats.Acc{}
	}
	turnObjective := false
	for _, ob := range objs {
		turnObjective = turnObjective || ob.Turn >= 0
	}
	if o.Compare && (o.HTML != "" || turnObjective) || o.Format == report.FormatLLMD {
		c.groupTurns = map[string]map[int]*stats.Acc{}
	}
	if o.Format == report.FormatLLMD {
		c.records = &report.RecordInfo{StageLoads: map[int]string{}, ToolVersion: o.Version}
	}
	gb, err := groupFunc(o.By)
	if err != nil {
		return nil, err
	}
	c.groupBy = gb
	switch o.By {
	case "turn":
		c.groupInt = func(r *record.Record) int { return r.Turn }
	case "client":
		c.groupInt = func(r *record.Record) int { return r.Client }
	}
	c.liteGroups = !o.fullGroups()
	if gb != nil && c.liteGroups && c.slo == nil {
		// The groups partition the summary's records: each sample of the
		// metrics the groups keep is kept once, by its group, and the
		// summary describes their union.
		c.fromGroups = stats.LiteMetrics
		if o.only != nil {
			c.fromGroups = o.only
		}
		c.all.KeepInParts(c.fromGroups)
	}
	c.stages = judge.NewStages(objs)
	if o.Compare {
		c.stagesBy = map[string]*judge.Stages{}
	}
	switch {
	case o.only != nil || o.NoRetention:
	case o.Compare:
		c.retBy = map[string]*retention.Pass{}
	default:
		c.ret = retention.New()
	}
	return c, nil
}

// groupFunc returns the group key of a record for --by.
func groupFunc(by string) (func(*record.Record, string) string, error) {
	switch by {
	case "":
		return nil, nil
	case "turn":
		return func(r *record.Record, _ string) string { return strconv.Itoa(r.Turn) }, nil
	case "conversation":
		return func(r *record.Record, _ string) string { return r.ConversationID }, nil
	case "client":
		return func(r *record.Record, _ string) string { return strconv.Itoa(r.Client) }, nil
	case "phase":
		return func(r *record.Record, _ string) string { return r.Phase }, nil
	case "run":
		return func(r *record.Record, _ string) string { return r.RunID }, nil
	case "file":
		return func(_ *record.Record, label string) string { return label }, nil
	}
	idx, ok := stats.FieldIndex[by]
	if !ok {
		return nil, fmt.Errorf("--by %s: not turn, conversation, client, phase, run, file or a record field", by)
	}
	return func(r *record.Record, _ string) string { return stats.FieldValue(r, idx).String() }, nil
}

// read scans fs to the end; it returns a fatal error, or a *SyntaxError
// under --strict.
// The reader owns fs: after an interrupt it may still be blocked in a
// read, so only it closes fs.
func (c *collector) read(fs *record.Files) error {
	// With --only the accounting is light: handing records over to
	// another goroutine would cost more (a copy of each record) than it
	// saves, as the decoders already work ahead on goroutines of their own.
	if c.live() || c.opts.only != nil {
		return c.readLive(fs)
	}
	return c.readPipelined(fs)
}

// readLive accounts each record as soon as it is read. From a live input
// the lock is taken for each record, as the next may be long in coming;
// from files, once per readBatch records (a lock per record was 6 % of
// the time of a --by turn --only ttft report).
func (c *collector) readLive(fs *record.Files) error {
	defer fs.Close()
	batch := readBatch
	if c.live() {
		batch = 1
	}
	locked, n := false, 0
	defer func() {
		if locked {
			c.mu.Unlock()
		}
	}()
	for fs.Scan() {
		if !locked {
			c.mu.Lock()
			locked = true
			if c.stopped {
				return nil
			}
		}
		if err := c.add(fs.Err(), fs.Record(), fs.Label(), fs.File()); err != nil {
			return err
		}
		if n++; n == batch {
			c.mu.Unlock()
			locked, n = false, 0
		}
	}
	return fs.Err()
}

// live reports whether an input is stdin, which may be a live pipe: then
// each record is accounted as soon as it is read, for --every and
// interrupts. Files are decoded ahead in batches instead.
func (c *collector) live() bool {
	return readsStdin(c.opts.Inputs)
}

// maxIntGroup bounds the keys of collector.byInt.
const maxIntGroup = 1 << 16

// readBatch is the number of records decoded ahead and handed over at once.
const readBatch = 512

// scanned is one Scan of record.Files: a copy of the record, or the
// problem with its line.
type scanned struct {
	err         error
	rec         record.Record
	label, file string
}

// readPipelined decodes the inputs in one goroutine while this one
// accounts the records, in batches, in the order they were read. The
// decoders never reuse the memory a record refers to, so a copy of the
// record stays valid after the next Scan.
func (c *collector) readPipelined(fs *record.Files) error {
	full := make(chan []scanned, 4)
	free := make(chan []scanned, 6)
	quit := make(chan struct{})
	var fatal error // written before full is closed
	go func() {
		defer close(full)
		defer fs.Close()
		b := make([]scanned, 0, readBatch)
		send := func() bool {
			select {
			case full <- b:
			case <-quit:
				return false
			}
			select {
			case b = <-free:
				b = b[:0]
			default:
				b = make([]scanned, 0, readBatch)
			}
			return true
		}
		for fs.Scan() {
			b = append(b, scanned{err: fs.Err(), label: fs.Label(), file: fs.File()})
			if s := &b[len(b)-1]; s.err == nil {
				s.rec = *fs.Record()
			}
			if len(b) == readBatch && !send() {
				return
			}
		}
		if len(b) > 0 && !send() {
			return
		}
		fatal = fs.Err()
	}()
	defer close(quit)
	for b := range full {
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			return nil
		}
		for i := range b {
			s := &b[i]
			if err := c.add(s.err, &s.rec, s.label, s.file); err != nil {
				c.mu.Unlock()
				return err
			}
		}
		c.mu.Unlock()
		clear(b) // drop references to the records' strings and lists
		select {
		case free <- b:
		default:
		}
	}
	return fatal
}

// add accounts one Scan: the problem err, or the record r of the input
// labelled label (file is its path).
func (c *collector) add(err error, r *record.Record, label, file string) error {
	if err != nil {
		var cut *record.CutError
		if errors.As(err, &cut) {
			// The end of a compressed input: not a line, said at once.
			c.in.Truncated++
			if c.opts.Strict {
				return err
			}
			fmt.Fprintln(c.opts.Err, err)
			return nil
		}
		c.in.Malformed++
		if errors.Is(err, record.ErrTruncated) {
			c.in.Truncated++
		}
		if c.opts.Strict {
			return err
		}
		if c.in.Malformed <= maxReported {
			fmt.Fprintln(c.opts.Err, err)
		} else if c.in.Malformed == maxReported+1 {
			fmt.Fprintln(c.opts.Err, "further malformed lines are only counted")
		}
		return nil
	}
	c.in.Records++
	fst := c.lastFile
	if fst == nil || fst.Label != label {
		fst = c.files[label]
		if fst == nil {
			fst = &stats.FileStats{Label: label, Path: file}
			c.files[label] = fst
			c.in.Files = append(c.in.Files, fst)
		}
		c.lastFile = fst
	}
	fst.Records++
	c.segs.Seen(r, label, file)
	if c.dedup.Seen(r.Key()) {
		c.in.Duplicates++
		return nil
	}
	warmup := !r.Measured() && !c.opts.IncludeWarmup
	match := !warmup && c.filter.Match(r)
	c.retain(r, label, match)
	if warmup {
		c.in.Warmup++
		return nil
	}
	if !match {
		c.in.FilteredOut++
		return nil
	}
	good := r.OK()
	if c.slo != nil && !r.Retried {
		good = c.slo.Good(r)
	}
	c.all.Add(r, good)
	if c.opts.only != nil {
		c.addGroup(r, label, good)
		return nil
	}
	c.aff.Add(r)
	c.segs.Add(r)
	if c.records != nil {
		c.records.Add(r)
	}
	switch {
	case r.Stage == 0:
	case c.stagesBy != nil:
		s := c.stagesBy[label]
		if s == nil {
			s = judge.NewStages(c.stages.Objectives())
			c.stagesBy[label] = s
		}
		s.Add(r)
	default:
		c.stages.Add(r) // staged runs only: it keeps its own samples
	}
	if c.opts.vllmLayout() {
		if q, ok := vllmcompat.RequestFrom(r); ok {
			c.vllm = append(c.vllm, q)
		}
	} else if c.opts.XLSX != "" {
		if len(c.raw) < workbook.MaxRows {
			c.raw = append(c.raw, report.RawRow(r))
		} else if len(c.raw) == workbook.MaxRows {
			fmt.Fprintf(c.opts.Err, "%s: more than %d records; the Raw data sheet holds the first ones\n", c.opts.XLSX, workbook.MaxRows)
			c.raw = append(c.raw, nil)
		}
	}
	c.addGroup(r, label, good)
	if c.turns != nil {
		t := c.turns[r.Turn]
		if t == nil {
			t = stats.NewAcc(false)
			c.turns[r.Turn] = t
		}
		t.Add(r, good)
	}
	return nil
}

// retain adds r to the cache retention pass of its input: every request
// touched the server's cache, counted (profiled) or not.
func (c *collector) retain(r *record.Record, label string, counted bool) {
	p := c.ret
	if c.retBy != nil {
		p = c.retBy[label]
		if p == nil {
			p = retention.New()
			c.retBy[label] = p
		}
	}
	if p != nil {
		p.Add(r, counted)
	}
}

// addGroup accounts the measured record r of the input labelled label in
// its --by group, if any.
func (c *collector) addGroup(r *record.Record, label string, good bool) {
	if c.groupBy == nil {
		return
	}
	if c.groupInt != nil && c.groupTurns == nil {
		if v := c.groupInt(r); v >= 0 && v < len(c.byInt) && c.byInt[v] != nil {
			c.byInt[v].Add(r, good)
			return
		}
	}
	k := c.groupBy(r, label)
	g := c.groups[k]
	if g == nil {
		switch {
		case c.opts.only != nil:
			g = stats.NewOnlyAcc(c.opts.only)
		case c.liteGroups:
			g = stats.NewLiteAcc(c.opts.By == "conversation")
		default:
			g = c.withGaps(stats.NewAcc(c.groupTurns != nil))
		}
		c.all.AddPart(g, c.fromGroups)
		c.groups[k] = g
		if c.groupInt != nil {
			if v := c.groupInt(r); v >= 0 && v < maxIntGroup {
				if v >= len(c.byInt) {
					c.byInt = append(c.byInt, make([]*stats.Acc, v+1-len(c.byInt))...)
				}
				c.byInt[v] = g
			}
		}
	}
	g.Add(r, good)
	if c.groupTurns != nil {
		gt := c.groupTurns[k]
		if gt == nil {
			gt = map[int]*stats.Acc{}
			c.groupTurns[k] = gt
		}
		t := gt[r.Turn]
		if t == nil {
			t = stats.NewAcc(false)
			gt[r.Turn] = t
		}
		t.Add(r, good)
	}
}

// passThrough copies the records that pass --where to enc (--records),
// warmup records included, duplicates dropped.
func passThrough(fs *record.Files, o *Options, filter stats.Filter, enc record.Encoder) (stats.Inputs, error) {
	var in stats.Inputs
	var d stats.Dedup
	for fs.Scan() {
		if err := fs.Err(); err != nil {
			in.Malformed++
			if o.Strict {
				return in, err
			}
			if in.Malformed <= maxReported {
				fmt.Fprintln(o.Err, err)
			}
			continue
		}
		r := fs.Record()
		in.Records++
		switch {
		case d.Seen(r.Key()):
			in.Duplicates++
		case filter.Match(r):
			if err := enc.Encode(r); err != nil {
				return in, err
			}
		default:
			in.FilteredOut++
		}
	}
	if err := fs.Err(); err != nil && !errors.Is(err, io.EOF) {
		return in, err
	}
	return in, nil
}

// withGaps makes a keep the clients' sends when Options.UserGaps is set.
func (c *collector) withGaps(a *stats.Acc) *stats.Acc {
	if c.opts.UserGaps {
		a.WithGaps()
	}
	return a
}
