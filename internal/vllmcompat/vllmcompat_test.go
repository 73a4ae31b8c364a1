package vllmcompat

import (
	"bytes"
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
	if err := v.Write(3, nil, time.Now()); err != nil {
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
	enc, err := v.Collect(record.NewJSONEncoder(&recs), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Remove()
	v.copies = record.NewJSONEncoder(&faultio.FullDisk{W: io.Discard, N: 10})
	const n = 5
	for i := range n {
		if err := enc.Encode(&record.Record{ConversationID: "c", Turn: i + 1}); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(recs.String(), "\n"); got != n {
		t.Errorf("%d records written, want %d", got, n)
	}
	err = v.Write(1, nil, time.Now())
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Write: %v, want the copy's ENOSPC", err)
	}
	if _, serr := os.Stat("stats.json"); serr != nil {
		t.Errorf("statistics JSON: %v", serr)
	}
}
