package vllmcompat

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
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
