package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/segment"
)

// A run split over N processes (mtrun --segment i/N, docs/scale-out.md)
// is merged like any set of inputs: every record goes into the same
// accumulators, so percentiles are computed from all records, never
// averaged over segments. This file adds the per-segment view: which
// segments are there, their counts, when each started, their lateness,
// and which are missing or duplicated.
//
// A record's segment is its shard field (mtrun writes shard = i for
// --segment i/N). The number of segments N and each segment's host come
// from the run manifests next to the record files (FILE.manifest.json,
// settings.segment "i/N", host); without a manifest N is inferred as the
// largest shard + 1, and the report says so.

// SegmentsReport is the per-segment view of the runs split over several
// processes.
type SegmentsReport struct {
	Runs []*SplitRun `json:"runs"`
}

// SplitRun is one run's segments.
type SplitRun struct {
	RunID string `json:"run_id"`
	// Count is the number of segments (from the manifests; else the
	// largest shard + 1, and Inferred is set).
	Count    int  `json:"count"`
	Inferred bool `json:"count_inferred,omitempty"`
	// CountConflict lists the differing counts of the manifests, if any.
	CountConflict []int `json:"count_conflict,omitempty"`
	// StartAt is the manifests' --start-at, if any.
	StartAt string `json:"start_at,omitempty"`
	// StartSpreadMs is the time between the earliest and the latest first
	// scheduled send of the segments.
	StartSpreadMs Num          `json:"start_spread_ms"`
	Segments      []*SegmentAt `json:"segments"`
	Missing       []int        `json:"missing,omitempty"`    // no records and no manifest
	Duplicated    []int        `json:"duplicated,omitempty"` // in more than one input
	// SharedSessions counts sessions with records in more than one
	// segment (0 for a correct split).
	SharedSessions int `json:"shared_sessions"`
	// Disagree names what the segments' manifests do not agree on (the
	// input's hash, "input_sha256", or a setting such as "seed" or
	// "max_tokens"), each with its values by segment: segments of one
	// run share every setting but their index.
	Disagree []Disagreement `json:"disagree,omitempty"`
}

// Disagreement is one setting the segments of a run differ on.
type Disagreement struct {
	Setting string `json:"setting"`
	// Values by segment index; "" when a manifest does not have it.
	Values map[int]string `json:"values"`
}

// String renders d as "seed: 0=1 1=1 2=7".
func (d Disagreement) String() string {
	var b strings.Builder
	b.WriteString(d.Setting + ":")
	for _, i := range slices.Sorted(maps.Keys(d.Values)) {
		v := d.Values[i]
		if v == "" {
			v = "(none)"
		}
		fmt.Fprintf(&b, " %d=%s", i, v)
	}
	return b.String()
}

// SegmentAt is one segment of a run.
type SegmentAt struct {
	Index    int      `json:"index"`
	Host     string   `json:"host,omitempty"`
	Inputs   []string `json:"inputs"`
	Requests int      `json:"requests"`
	Sessions int      `json:"sessions"`
	// FirstScheduled is the segment's earliest intended send time;
	// StartOffsetMs is its distance from the run's earliest.
	FirstScheduled *time.Time `json:"first_scheduled,omitempty"`
	StartOffsetMs  Num        `json:"start_offset_ms"`
	LatenessP50Ms  Num        `json:"lateness_p50_ms"`
	LatenessP99Ms  Num        `json:"lateness_p99_ms"`
	LatenessMaxMs  Num        `json:"lateness_max_ms"`
	// ClientWait… are the p50/p99/max of client_wait_ns over the
	// segment's records that carry it; NaN (null in JSON) when none does
	// (records from older versions), never 0.
	ClientWaitP50Ms Num `json:"client_wait_p50_ms"`
	ClientWaitP99Ms Num `json:"client_wait_p99_ms"`
	ClientWaitMaxMs Num `json:"client_wait_max_ms"`
}

// segKey names one segment of one run.
type segKey struct {
	run   string
	shard int
}

// segAcc accumulates one segment.
type segAcc struct {
	inputs   []string // labels, in order of appearance
	host     string
	requests int
	sessions map[string]struct{}
	first    time.Time
	lateness []float64 // ms
	wait     []float64 // ms, of the records with client_wait_ns
}

// Segments accumulates the per-segment view; it is cheap when the input
// is one unsplit run (one accumulator).
type Segments struct {
	accs map[segKey]*segAcc
	// last is the key of the last acc call, lastAcc its result.
	last      segKey
	lastAcc   *segAcc
	sessionAt map[string]map[string]int // run → session → shard, -1 when in several
	counts    map[string][]int          // run → segment counts of its manifests
	startAt   map[string]string
	manifests map[string]bool // manifest paths read
	// settings holds, by run and segment, each manifest setting (as
	// JSON) and the input's hash, for the disagreement check.
	settings map[string]map[int]map[string]string
	// lastFile is the input of the last record whose manifest was looked
	// for: records come in runs of one input.
	lastFile string
	warn     io.Writer
}

func NewSegments(warn io.Writer) *Segments {
	return &Segments{accs: map[segKey]*segAcc{}, sessionAt: map[string]map[string]int{},
		counts: map[string][]int{}, startAt: map[string]string{}, manifests: map[string]bool{}, warn: warn,
		settings: map[string]map[int]map[string]string{}}
}

func (s *Segments) acc(k segKey) *segAcc {
	if s.lastAcc != nil && k == s.last {
		return s.lastAcc // records come in runs of one segment
	}
	a := s.accs[k]
	if a == nil {
		a = &segAcc{sessions: map[string]struct{}{}}
		s.accs[k] = a
	}
	s.last, s.lastAcc = k, a
	return a
}

// Seen notes that the input labelled label, at path file, holds records
// of r's segment (duplicates included); it reads the input's manifest the
// first time.
func (s *Segments) Seen(r *record.Record, label, file string) {
	a := s.acc(segKey{r.RunID, r.Shard})
	if len(a.inputs) == 0 || a.inputs[len(a.inputs)-1] != label && !slices.Contains(a.inputs, label) {
		a.inputs = append(a.inputs, label)
	}
	if file == "stdin" || file == "" || file == s.lastFile {
		return
	}
	s.lastFile = file
	path := file
	if dir := filepath.Dir(file); strings.HasPrefix(filepath.Base(file), "part-") && strings.HasSuffix(dir, ".parquet") {
		path = dir // a part of a Parquet directory: the manifest is the directory's
	}
	s.readManifest(manifest.Path("", path), label)
}

// readManifest reads a run manifest once; a missing one is normal (the
// count is then inferred), a bad one is said on warn.
func (s *Segments) readManifest(path, label string) {
	if s.manifests[path] {
		return
	}
	s.manifests[path] = true
	m, err := manifest.Read(path)
	if os.IsNotExist(err) {
		return
	}
	segText, startAt := "", ""
	if err == nil {
		segText, startAt, err = segmentSettings(m)
	}
	var seg segment.Segment
	if err == nil && segText != "" {
		seg, err = segment.Parse(segText)
	}
	if err != nil {
		fmt.Fprintf(s.warn, "%s: manifest: %v (segment view without it)\n", path, err)
		return
	}
	if segText == "" || seg.IsWhole() {
		return // an unsplit run
	}
	a := s.acc(segKey{m.RunID, seg.Index})
	a.host = m.Host
	if !slices.Contains(a.inputs, label) {
		a.inputs = append(a.inputs, label)
	}
	if !slices.Contains(s.counts[m.RunID], seg.Count) {
		s.counts[m.RunID] = append(s.counts[m.RunID], seg.Count)
	}
	if startAt != "" {
		s.startAt[m.RunID] = startAt
	}
	set := map[string]string{}
	for k, v := range m.Settings {
		if k != "segment" { // the one setting segments differ on
			b, _ := json.Marshal(v)
			set[k] = string(b)
		}
	}
	if m.InputHash != "" { // written at the end: a killed segment has none
		set["input_sha256"] = m.InputHash
	}
	if s.settings[m.RunID] == nil {
		s.settings[m.RunID] = map[int]map[string]string{}
	}
	s.settings[m.RunID][seg.Index] = set
}

// disagreements lists the settings the manifests of run's segments differ
// on; the input's hash only among the manifests that have it.
func (s *Segments) disagreements(run string) []Disagreement {
	bySeg := s.settings[run]
	if len(bySeg) < 2 {
		return nil
	}
	keys := map[string]bool{}
	for _, set := range bySeg {
		for k := range set {
			keys[k] = true
		}
	}
	var out []Disagreement
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		d := Disagreement{Setting: k, Values: map[int]string{}}
		distinct := map[string]bool{}
		for i, set := range bySeg {
			v, ok := set[k]
			if !ok && k == "input_sha256" {
				continue
			}
			d.Values[i] = strings.Trim(v, `"`)
			distinct[v] = true
		}
		if len(distinct) > 1 {
			out = append(out, d)
		}
	}
	return out
}

// Add accounts a record counted in the report.
func (s *Segments) Add(r *record.Record) {
	a := s.acc(segKey{r.RunID, r.Shard})
	a.requests++
	if a.first.IsZero() || r.Scheduled.Before(a.first) {
		a.first = r.Scheduled
	}
	a.lateness = append(a.lateness, Millis(r.LatenessNs))
	if r.ClientWaitNs != nil {
		a.wait = append(a.wait, Millis(*r.ClientWaitNs))
	}
	a.sessions[r.ConversationID] = struct{}{}
	at := s.sessionAt[r.RunID]
	if at == nil {
		at = map[string]int{}
		s.sessionAt[r.RunID] = at
	}
	if prev, ok := at[r.ConversationID]; !ok {
		at[r.ConversationID] = r.Shard
	} else if prev != r.Shard {
		at[r.ConversationID] = -1
	}
}

// maxInferredSegments bounds the number of segments guessed from shard
// numbers when no manifest gives it.
const maxInferredSegments = 4096

// Report returns the view of the runs with more than one segment (by
// manifest or by shard), nil when there is none.
func (s *Segments) Report() *SegmentsReport {
	if s == nil {
		return nil
	}
	byRun := map[string][]int{}
	for k := range s.accs {
		byRun[k.run] = append(byRun[k.run], k.shard)
	}
	var rep SegmentsReport
	for _, run := range slices.Sorted(maps.Keys(byRun)) {
		shards := byRun[run]
		slices.Sort(shards)
		counts := s.counts[run]
		if len(shards) < 2 && len(counts) == 0 {
			continue
		}
		sr := &SplitRun{RunID: run, StartAt: s.startAt[run]}
		switch {
		case len(counts) == 0:
			// Without a manifest, shards numbered far apart (or below 0)
			// are not the segments of one split run.
			if shards[0] < 0 || shards[len(shards)-1] >= maxInferredSegments {
				continue
			}
			sr.Count, sr.Inferred = shards[len(shards)-1]+1, true
		default:
			sr.Count = slices.Max(counts)
			if len(counts) > 1 {
				sr.CountConflict = slices.Sorted(slices.Values(counts))
			}
		}
		var earliest time.Time
		for _, sh := range shards {
			if a := s.accs[segKey{run, sh}]; !a.first.IsZero() && (earliest.IsZero() || a.first.Before(earliest)) {
				earliest = a.first
			}
		}
		present := map[int]bool{}
		latest := 0.0
		for _, sh := range shards {
			a := s.accs[segKey{run, sh}]
			present[sh] = true
			seg := &SegmentAt{Index: sh, Host: a.host, Inputs: a.inputs, Requests: a.requests, Sessions: len(a.sessions)}
			seg.StartOffsetMs = Num(math.NaN())
			if !a.first.IsZero() {
				f := a.first.UTC()
				seg.FirstScheduled = &f
				off := Millis(int64(a.first.Sub(earliest)))
				seg.StartOffsetMs, latest = Num(off), max(latest, off)
			}
			seg.LatenessP50Ms, seg.LatenessP99Ms, seg.LatenessMaxMs = p50p99max(a.lateness)
			seg.ClientWaitP50Ms, seg.ClientWaitP99Ms, seg.ClientWaitMaxMs = p50p99max(a.wait)
			if len(a.inputs) > 1 {
				sr.Duplicated = append(sr.Duplicated, sh)
			}
			sr.Segments = append(sr.Segments, seg)
		}
		sr.StartSpreadMs = Num(latest)
		if earliest.IsZero() {
			sr.StartSpreadMs = Num(math.NaN())
		}
		for i := range sr.Count {
			if !present[i] {
				sr.Missing = append(sr.Missing, i)
			}
		}
		for _, sh := range s.sessionAt[run] {
			if sh < 0 {
				sr.SharedSessions++
			}
		}
		sr.Disagree = s.disagreements(run)
		rep.Runs = append(rep.Runs, sr)
	}
	if len(rep.Runs) == 0 {
		return nil
	}
	return &rep
}

// p50p99max sorts xs and returns its p50, p99 and max; NaN for each when
// xs is empty.
func p50p99max(xs []float64) (p50, p99, maxi Num) {
	if len(xs) == 0 {
		nan := Num(math.NaN())
		return nan, nan, nan
	}
	slices.Sort(xs)
	return Num(Quantile(xs, 0.5)), Num(Quantile(xs, 0.99)), Num(xs[len(xs)-1])
}

// segmentSettings returns the settings segment and start_at of m ("" when
// absent); a value that is not a string is an error.
func segmentSettings(m *manifest.Manifest) (seg, startAt string, err error) {
	for _, f := range []struct {
		key string
		to  *string
	}{{"segment", &seg}, {"start_at", &startAt}} {
		v, ok := m.Settings[f.key]
		if !ok || v == nil {
			continue
		}
		s, isText := v.(string)
		if !isText {
			return "", "", fmt.Errorf("settings.%s: %v, want a string", f.key, v)
		}
		*f.to = s
	}
	return seg, startAt, nil
}
