package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/source"
)

// A test-only timed format ("#test-trace" then "session,timestamp_ms,prompt"
// lines), registered as a trace format file registers itself: mtconvert
// takes it with --from and detects it, and writes its sessions with
// timestamp_ms and history.
func init() {
	source.Register(source.Format{
		Name:  "test-trace",
		Doc:   "test only",
		Timed: true,
		Detect: func(_ string, head []byte) bool {
			return strings.HasPrefix(string(head), "#test-trace\n")
		},
		Open: func(r io.Reader, name string, _ source.Options) (source.Source, error) {
			sc := bufio.NewScanner(r)
			var convs []conv.Conversation
			for line := 1; sc.Scan(); line++ {
				if line == 1 {
					continue
				}
				f := strings.SplitN(sc.Text(), ",", 3)
				ts, err := strconv.ParseFloat(f[1], 64)
				if len(f) != 3 || err != nil {
					return nil, fmt.Errorf("%s:%d: timestamp_ms: bad line", name, line)
				}
				convs = append(convs, conv.Conversation{ID: f[0], History: conv.HistoryNone,
					Messages: []conv.Message{{Role: conv.RoleUser, Content: f[2], TimestampMs: &ts}}})
			}
			return source.Slice(convs), sc.Err()
		},
	})
}

func TestTraceFormat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(path, []byte("#test-trace\ns1,0,first\ns2,250.5,second\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `{"id":"s1","messages":[{"role":"user","content":"first","timestamp_ms":0}],"history":"none"}
{"id":"s2","messages":[{"role":"user","content":"second","timestamp_ms":250.5}],"history":"none"}
`
	for _, args := range [][]string{{"--input-format", "test-trace", "-q", path}, {"-q", path}} {
		var out, errb strings.Builder
		code := run(context.Background(), append([]string{"mtconvert"}, args...), command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		if code != 0 || out.String() != want {
			t.Errorf("%q: exit %d, stderr %q, output:\n%s", args, code, errb.String(), out.String())
		}
	}
}

// TestUnknownFrom: an unknown --from is a usage error listing every
// registered format.
func TestUnknownFrom(t *testing.T) {
	t.Parallel()
	var out, errb strings.Builder
	code := run(context.Background(), []string{"mtconvert", "--input-format", "csv"}, command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	want := `mtconvert: --input-format: format "csv": want auto or one of ` + strings.Join(source.Names(), ", ") + "\n"
	if code != 2 || errb.String() != want || !strings.Contains(want, "test-trace") {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), want)
	}
}

// TestMooncakeOut: the start of a real Mooncake excerpt, named or detected, is written
// as conversation JSONL that mtrun reads back as the same timed sessions.
func TestMooncakeOut(t *testing.T) {
	t.Parallel()
	// The first 12 requests: synthesizing all 300 prompts takes seconds.
	data, err := os.ReadFile("../../internal/source/testdata/traces/mooncake_conversation_head300.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "mooncake.jsonl")
	if err := os.WriteFile(trace, []byte(strings.Join(strings.SplitAfter(string(data), "\n")[:12], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := source.Open(trace, "", nil, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []conv.Conversation
	for c, ok := in.Next(); ok; c, ok = in.Next() {
		want = append(want, c)
	}
	in.Close()
	for _, args := range [][]string{{"--input-format", "mooncake", "-q", trace}, {"-q", trace}} {
		var out, errb strings.Builder
		code := run(context.Background(), append([]string{"mtconvert"}, args...), command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errb.String())
		}
		back, err := source.Open("-", "", strings.NewReader(out.String()), source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for c, ok := back.Next(); ok; c, ok = back.Next() {
			if n < len(want) && (c.ID != want[n].ID || c.History != want[n].History || len(c.Messages) != len(want[n].Messages) || *c.Messages[0].TimestampMs != *want[n].Messages[0].TimestampMs) {
				t.Errorf("%q: session %d: %s differs from the trace's %s", args, n, c.ID, want[n].ID)
			}
			n++
		}
		if err := back.Err(); err != nil || n != len(want) || back.Format.Name != "conversations" || !back.Timed() {
			t.Errorf("%q: %d sessions read back (want %d) as %s, timed %v: %v", args, n, len(want), back.Format.Name, back.Timed(), err)
		}
		back.Close()
	}
}
