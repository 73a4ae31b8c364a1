package mtstats

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// TestTurnLabels pins what mtstats' outputs say they count (issue 23:
// "turn" meant messages in mtgen's --turns, vLLM's num_turns, and
// requests in conversation_turns and --by turn, unlabelled). Messages keep
// vLLM's name (input_num_turns) with a legend; user turns (requests) are
// called so; the JSON and CSV reports keep conversation_turns, the old
// name, beside conversation_user_turns.
func TestTurnLabels(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 21, Run: "r", Convs: 12, MaxTurns: 4})
	for i := range recs {
		recs[i].Backend = []string{"a", "b"}[i%2] // a session-affinity section
	}
	in := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	html := filepath.Join(t.TempDir(), "r.html")
	run := func(format, by, htmlOut string) string {
		t.Helper()
		var out, errb bytes.Buffer
		o := Options{Inputs: []string{in}, Out: &out, Err: &errb, Format: format, By: by, HTML: htmlOut}
		if err := Run(context.Background(), o); err != nil {
			t.Fatalf("%s --by %q: %v\n%s", format, by, err, errb.String())
		}
		return out.String()
	}
	text := run(report.FormatTable, "turn", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		output       string
		got          string
		want, absent []string
	}{
		{"table --by turn", text,
			[]string{
				"(input_num_turns, vLLM's name: messages sent with the request, the history and the new user message)",
				"\n conversation_user_turns ",
				"by turn (user turn: the conversation's request number, from 0):",
				"later_user_turns = ", "(requests after a conversation's first)",
				"Session affinity (backend per request):", "user_turns_moved = ",
			},
			[]string{"conversation_turns", "later_turns", "\nby turn:", "\nturns_moved = ", " turns moved"}},
		{"markdown", run(report.FormatMarkdown, "", ""),
			[]string{"(input_num_turns, vLLM's name: messages", "conversation_user_turns"},
			[]string{"conversation_turns"}},
		{"table --by conversation", run(report.FormatTable, "conversation", ""),
			[]string{" conversation  user_turns  failed "},
			nil},
		{"json", run(report.FormatJSON, "", ""),
			[]string{`"conversation_user_turns": {`, `"conversation_turns": {`, `"input_num_turns": {`, `"completed": `},
			nil},
		{"csv", run(report.FormatCSV, "", ""),
			[]string{"\nall,conversation_user_turns,", "\nall,conversation_turns,", "\nall,input_num_turns,"},
			nil},
		{"html", string(page),
			[]string{`"TTFT by user turn"`, `"user turn (request of the conversation, from 0)"`,
				"requests after a conversation's first moved", "(input_num_turns, vLLM&#39;s name: messages"},
			[]string{`"TTFT by turn"`, `"xlabel":"turn"`, " turns moved"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.got, w) {
				t.Errorf("%s: no %q", tc.output, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(tc.got, a) {
				t.Errorf("%s: still %q", tc.output, a)
			}
		}
	}
}
