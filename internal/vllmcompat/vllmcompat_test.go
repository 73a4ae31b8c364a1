package vllmcompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/faultio"
	"github.com/mtkit/mtkit/internal/record"
)

func FuzzParsePercentages(f *testing.F) {
	for _, s := range []string{"0%", "0%,50%", "10,20.5%", "%", "100%", "-1", "1e1%,NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePercentages(s)
		if err != nil {
			return
		}
		if len(p) == 0 || !slices.IsSorted(p) {
			t.Fatalf("%q: %v", s, p)
		}
		for _, v := range p {
			if !(v >= 0 && v < 1) {
				t.Fatalf("%q: %v out of [0, 1)", s, p)
			}
		}
	})
}

// nopCloser is a buffer that records its Close.
type nopCloser struct {
	bytes.Buffer
	closed bool
}

func (n *nopCloser) Close() error { n.closed = true; return nil }

// TestConversationsOut: a .json path gets one JSON list (valid with zero,
// one or more conversations); any other path gets the lines as written.
func TestConversationsOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path  string
		lines []string
		want  string
	}{
		{"c.json", nil, "[]\n"},
		{"c.json", []string{`{"id":"a"}` + "\n"}, "[\n{\"id\":\"a\"}\n]\n"},
		{"c.json", []string{`{"id":"a"}` + "\n", `{"id":"b"}` + "\n"}, "[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n]\n"},
		{"c.jsonl", []string{`{"id":"a"}` + "\n"}, `{"id":"a"}` + "\n"},
	} {
		var out nopCloser
		w := ConversationsOut(tc.path, &out)
		for _, l := range tc.lines {
			if n, err := w.Write([]byte(l)); err != nil || n != len(l) {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		if err := w.Close(); err != nil || !out.closed {
			t.Fatalf("Close: %v, closed %v", err, out.closed)
		}
		if out.String() != tc.want {
			t.Errorf("%s with %d lines: %q, want %q", tc.path, len(tc.lines), out.String(), tc.want)
		}
		if strings.HasSuffix(tc.path, ".json") {
			var v []map[string]string
			if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v) != len(tc.lines) {
				t.Errorf("%q: %v, %d items", out.String(), err, len(v))
			}
		}
	}
}

// TestNilOutputs: a run without vLLM outputs passes records through.
func TestNilOutputs(t *testing.T) {
	t.Parallel()
	var v *Outputs
	if err := v.Write(context.Background(), 3, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestCopyFailureKeepsRecords: when the workbook's copy of the records
// cannot be written (a full $TMPDIR), every record still reaches the
// run's records, Encode does not fail (the run goes on), and Write
// reports the copy's error after writing the statistics JSON.
func TestCopyFailureKeepsRecords(t *testing.T) {
	t.Chdir(t.TempDir())
	var recs bytes.Buffer
	v := &Outputs{Excel: true, StatsJSON: "stats.json", Clients: 1}
	enc, err := v.Collect(record.NewJSONEncoder(&recs), "-", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Remove()
	v.copies = record.NewJSONEncoder(&faultio.FullDisk{W: io.Discard, N: 10})
	const n = 5
	for i := range n {
		if err := enc.Encode(okRecord(i + 1)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(recs.String(), "\n"); got != n {
		t.Errorf("%d records written, want %d", got, n)
	}
	err = v.Write(context.Background(), 1, nil, time.Now())
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Write: %v, want the copy's ENOSPC", err)
	}
	if _, serr := os.Stat("stats.json"); serr != nil {
		t.Errorf("statistics JSON: %v", serr)
	}
}

// okRecord is a successful measured request, one the workbook uses.
func okRecord(turn int) *record.Record {
	return &record.Record{ConversationID: "c", Turn: turn, Status: 200, Start: time.Unix(1, 0)}
}

// TestWorkbookInput: mtstats reads the run's records file when there is
// one; only records on stdout are copied, compressed, and only those the
// workbook uses.
func TestWorkbookInput(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, records := range []string{"recs.jsonl", "recs.parquet", "-"} {
		v := &Outputs{Excel: true, Clients: 1}
		enc, err := v.Collect(record.NewJSONEncoder(io.Discard), records, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		warm := okRecord(1)
		warm.Phase = record.PhaseWarmup
		for _, r := range []*record.Record{warm, okRecord(2)} {
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		args := v.mtstatsArgs("w.xlsx", 1, nil)
		if !slices.Contains(args, "--no-retention") {
			t.Errorf("mtstats %q: want --no-retention (its report is discarded)", args)
		}
		in := args[len(args)-1]
		if records != "-" {
			if in != records || v.copyPath != "" {
				t.Errorf("%s: mtstats reads %s, copy %q; want the records file, no copy", records, in, v.copyPath)
			}
			continue
		}
		if in != v.copyPath || !strings.HasSuffix(in, ".jsonl.zst") {
			t.Errorf("stdout: mtstats reads %q, copy %q; want the .jsonl.zst copy", in, v.copyPath)
		}
		if err := v.copies.Close(); err != nil {
			t.Fatal(err)
		}
		v.copies = nil
		files := &record.Files{Paths: []string{in}}
		defer files.Close()
		n := 0
		for files.Scan() {
			n++
		}
		if err := files.Err(); err != nil || n != 1 {
			t.Errorf("copy: %d records (%v), want the 1 the workbook uses", n, err)
		}
		v.Remove()
	}
}
