package mtstats

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
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

func TestExpandInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Issue 24: the series files were read as records (72 "malformed").
	for _, n := range []string{"seg-0.jsonl", "seg-1.jsonl.zst", "seg-2.jsonl.gz", "seg-0.manifest.json", "notes.txt", ".seg-9.jsonl",
		"seg-0.metrics.jsonl", "seg-1.metrics.jsonl.zst"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parts := filepath.Join(dir, "seg-3.parquet")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parts, "part-000000.parquet"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A run killed before its first part closed (issue 24: an error).
	killed := filepath.Join(dir, "seg-4.parquet")
	if err := os.Mkdir(killed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(killed, ".part-000000.parquet.tmp"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, tc := range []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{"stdin and files stay", []string{"-", p("seg-0.jsonl"), "missing.jsonl"}, []string{"-", p("seg-0.jsonl"), "missing.jsonl"}, ""},
		{"a directory: its record files in name order", []string{dir},
			[]string{p("seg-0.jsonl"), p("seg-1.jsonl.zst"), p("seg-2.jsonl.gz"), p("seg-3.parquet"), p("seg-4.parquet")}, ""},
		{"a directory of Parquet parts is one input", []string{parts}, []string{parts}, ""},
		{"a parts directory without parts is one input", []string{killed}, []string{killed}, ""},
		{"a labelled directory", []string{"run=" + dir},
			[]string{"run/seg-0.jsonl=" + p("seg-0.jsonl"), "run/seg-1.jsonl.zst=" + p("seg-1.jsonl.zst"), "run/seg-2.jsonl.gz=" + p("seg-2.jsonl.gz"), "run/seg-3.parquet=" + p("seg-3.parquet"), "run/seg-4.parquet=" + p("seg-4.parquet")}, ""},
		{"a glob", []string{p("seg-*.jsonl*")}, []string{p("seg-0.jsonl"), p("seg-1.jsonl.zst"), p("seg-2.jsonl.gz")}, ""},
		{"a glob that matches nothing", []string{p("x-*.jsonl")}, nil, "no file matches"},
		{"a directory without records", []string{empty}, nil, "no record files"},
	} {
		got, _, err := ExpandInputs(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: ExpandInputs(%q) = %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		}
	}
}

// splitRun writes segments of run "split" to dir as mtrun --segment i/n
// does: seg-i.jsonl and seg-i.manifest.json, for the indexes in segs;
// segment i starts i ms after the first. It returns each segment's
// records.
func splitRun(t *testing.T, dir string, n int, segs ...int) map[int][]record.Record {
	t.Helper()
	base := time.Date(2026, 11, 23, 23, 30, 0, 0, time.UTC)
	out := map[int][]record.Record{}
	for _, i := range segs {
		recs := statstest.Records(statstest.Config{Seed: uint64(10 + i), Run: "split", Shard: i, Convs: 6 + i, MaxTurns: 4, Warmup: 1,
			Start: base.Add(time.Duration(i) * time.Millisecond)})
		for k := range recs {
			recs[k].ConversationID = fmt.Sprintf("s%d-%s", i, recs[k].ConversationID)
		}
		out[i] = recs
		name := filepath.Join(dir, fmt.Sprintf("seg-%d", i))
		if err := os.WriteFile(name+".jsonl", statstest.JSONL(t, recs), 0o644); err != nil {
			t.Fatal(err)
		}
		m := fmt.Sprintf(`{"run_id":"split","host":"node-%d","settings":{"segment":"%d/%d","start_at":"2026-11-23T23:30:00Z"}}`, i, i, n)
		if err := os.WriteFile(name+".manifest.json", []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func segmentsOf(t *testing.T, o Options) (*stats.SegmentsReport, map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	o.Out, o.Err, o.Format = &out, &errb, report.FormatJSON
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("Run: %v\nstderr: %s", err, errb.String())
	}
	var rep struct {
		Summary  map[string]any        `json:"summary"`
		Segments *stats.SegmentsReport `json:"segments"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Segments, rep.Summary, errb.String()
}

// TestSegmentsView merges a run split in 5 whose segment 4 is missing and
// whose segment 1 was written twice (a retried pod), from a directory.
func TestSegmentsView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := splitRun(t, dir, 5, 0, 1, 2, 3)
	// A retry of segment 1 wrote its records again to another file.
	again, _ := os.ReadFile(filepath.Join(dir, "seg-1.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, "seg-1b.jsonl"), again, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := segmentsOf(t, Options{Inputs: []string{dir}})
	if rep == nil || len(rep.Runs) != 1 {
		t.Fatalf("segments %+v, want one run", rep)
	}
	r := rep.Runs[0]
	if r.RunID != "split" || r.Count != 5 || r.Inferred || r.StartAt != "2026-11-23T23:30:00Z" {
		t.Errorf("run %+v", r)
	}
	if !slices.Equal(r.Missing, []int{4}) || !slices.Equal(r.Duplicated, []int{1}) || r.SharedSessions != 0 {
		t.Errorf("missing %v duplicated %v shared %d; want [4] [1] 0", r.Missing, r.Duplicated, r.SharedSessions)
	}
	var first []time.Time
	for _, s := range r.Segments {
		var late []float64
		var sched time.Time
		sessions := map[string]bool{}
		for _, rec := range recs[s.Index] {
			if !rec.Measured() {
				continue
			}
			late = append(late, stats.Millis(rec.LatenessNs))
			sessions[rec.ConversationID] = true
			if sched.IsZero() || rec.Scheduled.Before(sched) {
				sched = rec.Scheduled
			}
		}
		first = append(first, sched)
		slices.Sort(late)
		if s.Requests != len(late) || s.Sessions != len(sessions) || s.Host != fmt.Sprintf("node-%d", s.Index) {
			t.Errorf("segment %d: %d requests, %d sessions, host %q; want %d, %d, node-%d", s.Index, s.Requests, s.Sessions, s.Host, len(late), len(sessions), s.Index)
		}
		if float64(s.LatenessP99Ms) != stats.Quantile(late, 0.99) || float64(s.LatenessMaxMs) != late[len(late)-1] {
			t.Errorf("segment %d: lateness p99 %v max %v, want %v %v", s.Index, s.LatenessP99Ms, s.LatenessMaxMs, stats.Quantile(late, 0.99), late[len(late)-1])
		}
		if s.FirstScheduled == nil || !s.FirstScheduled.Equal(sched) {
			t.Errorf("segment %d: first scheduled %v, want %v", s.Index, s.FirstScheduled, sched)
		}
	}
	spread := stats.Millis(int64(slices.MaxFunc(first, time.Time.Compare).Sub(slices.MinFunc(first, time.Time.Compare))))
	if float64(r.StartSpreadMs) != spread || spread == 0 {
		t.Errorf("start spread %v ms, want %v", r.StartSpreadMs, spread)
	}
}

// TestSegmentsMergeAllRecords: the merged summary of the segments is the
// summary of one file holding all their records (percentiles from all
// records, never averaged), and a session in two segments is reported.
func TestSegmentsMergeAllRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := splitRun(t, dir, 3, 0, 1, 2)
	var all []record.Record
	for i := range 3 {
		all = append(all, recs[i]...)
	}
	one := writeTemp(t, "all.jsonl", statstest.JSONL(t, all))
	_, merged, _ := segmentsOf(t, Options{Inputs: []string{filepath.Join(dir, "seg-*.jsonl")}})
	_, whole, _ := segmentsOf(t, Options{Inputs: []string{one}})
	if !jsonEqual(merged["metrics"], whole["metrics"]) || merged["requests"] != whole["requests"] || merged["metrics"] == nil {
		t.Error("the merged segments summarise differently from the concatenated records")
	}
	// Segment 2 sends a turn of a session of segment 0.
	last := func(r []record.Record) *record.Record { return &r[len(r)-1] } // measured, not warmup
	last(recs[2]).ConversationID = last(recs[0]).ConversationID
	if err := os.WriteFile(filepath.Join(dir, "seg-2.jsonl"), statstest.JSONL(t, recs[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := segmentsOf(t, Options{Inputs: []string{dir}})
	if rep.Runs[0].SharedSessions != 1 {
		t.Errorf("shared sessions %d, want 1", rep.Runs[0].SharedSessions)
	}
}

func TestSegmentsInferredAndBadManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	splitRun(t, dir, 4, 0, 2)
	os.Remove(filepath.Join(dir, "seg-0.manifest.json"))
	if err := os.WriteFile(filepath.Join(dir, "seg-2.manifest.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, stderr := segmentsOf(t, Options{Inputs: []string{dir}})
	r := rep.Runs[0]
	if r.Count != 3 || !r.Inferred || !slices.Equal(r.Missing, []int{1}) {
		t.Errorf("count %d inferred %v missing %v; want 3 true [1]", r.Count, r.Inferred, r.Missing)
	}
	if !strings.Contains(stderr, "seg-2.manifest.json: manifest: ") {
		t.Errorf("stderr %q does not name the bad manifest", stderr)
	}
	// One unsplit run (its manifest says segment 0/1, as mtrun writes it):
	// no segment view.
	single := writeTemp(t, "one.jsonl", statstest.JSONL(t, statstest.Records(statstest.Config{Seed: 1, Run: "one", Convs: 3, MaxTurns: 2})))
	if err := os.WriteFile(manifest.Path("", single), []byte(`{"run_id":"one","host":"h","settings":{"segment":"0/1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, _, _ := segmentsOf(t, Options{Inputs: []string{single}}); rep != nil {
		t.Errorf("segment view of an unsplit run: %+v", rep)
	}
	if math.IsNaN(float64(r.StartSpreadMs)) {
		t.Error("no start spread")
	}
}

// TestEmptyPartsDir: the Parquet directory of a run killed before its
// first part closed reads as 0 records, as an empty JSONL file does (issue
// 24: it was an error), alone and beside records.
func TestEmptyPartsDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	killed := filepath.Join(dir, "k.parquet")
	if err := os.Mkdir(killed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(killed, ".part-000000.parquet.tmp"), []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyJSONL := filepath.Join(dir, "e.jsonl")
	if err := os.WriteFile(emptyJSONL, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(inputs ...string) (string, error) {
		var out, errb bytes.Buffer
		err := Run(context.Background(), Options{Inputs: inputs, Out: &out, Err: &errb, Format: "json"})
		return out.String() + errb.String(), err
	}
	gotK, errK := run(killed)
	gotE, errE := run(emptyJSONL)
	if fmt.Sprint(errK) != fmt.Sprint(errE) || gotK != gotE {
		t.Errorf("killed parts directory: %q, %v; empty JSONL: %q, %v", gotK, errK, gotE, errE)
	}
	recs := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(recs, statstest.JSONL(t, statstest.Records(statstest.Config{Seed: 1, Run: "r1", Convs: 4, MaxTurns: 3})), 0o644); err != nil {
		t.Fatal(err)
	}
	withK, err1 := run(killed, recs)
	alone, err2 := run(recs)
	if err1 != nil || err2 != nil || withK != alone {
		t.Errorf("records beside the killed directory: %v, %v\n%s\nalone:\n%s", err1, err2, withK, alone)
	}
}

// TestChoicesCountTurns: records of --choices 3 (one per choice of each
// request) give the conversation figures of one choice: turns are
// counted, not choices (issue 24: 12 conversation_turns for a 4-turn
// conversation).
func TestChoicesCountTurns(t *testing.T) {
	t.Parallel()
	one := statstest.Records(statstest.Config{Seed: 3, Run: "r1", Convs: 5, MaxTurns: 4})
	var three []record.Record
	for _, r := range one {
		for c := range 3 {
			r := r
			r.Choice, r.Seq = c, 3*r.Seq+int64(c) // mtrun numbers each choice's record
			three = append(three, r)
		}
	}
	dir := t.TempDir()
	convs := func(recs []record.Record) string {
		path := filepath.Join(dir, fmt.Sprintf("r%d.jsonl", len(recs)))
		if err := os.WriteFile(path, statstest.JSONL(t, recs), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		o := Options{Inputs: []string{path}, Out: &out, Err: &errb, Format: "json"}
		if err := Run(context.Background(), o); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		var rep map[string]any
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rep["summary"].(map[string]any)["conversations"])
		return string(b)
	}
	if got, want := convs(three), convs(one); got != want || !strings.Contains(want, "conversation_turns") {
		t.Errorf("with 3 choices: %s\nwith one: %s", got, want)
	}
}

// TestSegmentsDisagree: segments whose manifests differ on --seed, the
// input's hash or a request setting are flagged in the segment view and
// on stderr, and are an error under --strict (issue 24: merged without a
// word). A manifest without the hash (a killed segment) does not count.
func TestSegmentsDisagree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	splitRun(t, dir, 3, 0, 1, 2)
	agreeing := func(i int, extra string) string {
		return fmt.Sprintf(`{"run_id":"split","host":"node-%d"%s,"settings":{"segment":"%d/3","start_at":"2026-11-23T23:30:00Z","seed":1,"max_tokens":64}}`, i, extra, i)
	}
	write := func(i int, m string) {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seg-%d.manifest.json", i)), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(0, agreeing(0, `,"input_sha256":"aaa"`))
	write(1, agreeing(1, `,"input_sha256":"aaa"`))
	write(2, agreeing(2, "")) // killed: no hash
	segs, _, stderr := segmentsOf(t, Options{Inputs: []string{dir}, Strict: true})
	if len(segs.Runs) != 1 || len(segs.Runs[0].Disagree) != 0 || strings.Contains(stderr, "disagree") {
		t.Fatalf("agreeing segments flagged: %+v\n%s", segs.Runs, stderr)
	}
	write(1, strings.Replace(agreeing(1, `,"input_sha256":"bbb"`), `"seed":1`, `"seed":7`, 1))
	write(2, strings.Replace(agreeing(2, ""), `"max_tokens":64`, `"max_tokens":65`, 1))
	segs, _, stderr = segmentsOf(t, Options{Inputs: []string{dir}})
	var got []string
	for _, d := range segs.Runs[0].Disagree {
		got = append(got, d.String())
	}
	want := []string{"input_sha256: 0=aaa 1=bbb", "max_tokens: 0=64 1=64 2=65", "seed: 0=1 1=7 2=1"}
	if !slices.Equal(got, want) || !strings.Contains(stderr, "warning: run split: the segments' manifests disagree (input_sha256: 0=aaa 1=bbb; max_tokens") {
		t.Errorf("disagreements %q, want %q; stderr %q", got, want, stderr)
	}
	var out, errb bytes.Buffer
	err := Run(context.Background(), Options{Inputs: []string{dir}, Strict: true, Out: &out, Err: &errb})
	if !errors.Is(err, ErrSegmentsDisagree) {
		t.Errorf("--strict: %v, want ErrSegmentsDisagree", err)
	}
	if !strings.Contains(out.String(), "DISAGREE") || !strings.Contains(out.String(), "seed: 0=1 1=7 2=1") {
		t.Errorf("the table does not flag the disagreement:\n%s", out.String())
	}
}
