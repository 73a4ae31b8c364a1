package mtstats

import (
	"strings"
	"testing"
)

// TestCompletedAlias pins mtstats/v1's conversations.completed: issue 23
// renamed the conversation counts (finished, failed, abandoned,
// unfinished) without a schema change, so "completed" stays, deprecated,
// equal to "finished"; for records that do not say how conversations
// ended it is what v1 reported, the conversations without a failed
// request. It is in the summary and in every group.
func TestCompletedAlias(t *testing.T) {
	t.Parallel()
	seq := 0
	rec := func(conv string, turn int, status int, class, end string) string {
		s := `{"run_id":"r","seq":` + itoa(seq) + `,"conversation_id":"` + conv + `","turn":` + itoa(turn) +
			`,"phase":"measure","start":"2026-11-23T22:00:0` + itoa(turn) + `Z","end":"2026-11-23T22:00:0` + itoa(turn+1) +
			`Z","status":` + itoa(status)
		seq++
		if class != "" {
			s += `,"error_class":"` + class + `"`
		}
		if end != "" {
			s += `,"conversation_end":"` + end + `"`
		}
		return s + "}\n"
	}
	for _, tc := range []struct {
		name                 string
		records              string
		completed, finished  float64
		withoutFailedRequest float64
	}{
		// a finished; b failed (its second request failed, it went on);
		// c unfinished (no conversation_end): finished 1, completed 1
		// although two conversations had no failed request.
		{"with conversation_end", rec("a", 0, 200, "", "") + rec("a", 1, 200, "", "finished") +
			rec("b", 0, 500, "http_5xx", "") + rec("b", 1, 200, "", "failed") + rec("c", 0, 200, "", ""), 1, 1, 2},
		// Older records: v1 counted the conversations without a failed request.
		{"without conversation_end", rec("a", 0, 200, "", "") + rec("a", 1, 200, "", "") +
			rec("b", 0, 500, "http_5xx", "") + rec("c", 0, 200, "", ""), 2, -1, 2},
	} {
		seq = 0
		p := writeTemp(t, strings.ReplaceAll(tc.name, " ", "-")+".jsonl", []byte(tc.records))
		m, _ := runJSON(t, Options{Inputs: []string{p}, By: "turn"})
		convs := []any{get(m, "summary", "conversations")}
		groups, _ := m["groups"].([]any)
		if len(groups) == 0 {
			t.Fatalf("%s: no groups", tc.name)
		}
		for _, g := range groups {
			convs = append(convs, get(g.(map[string]any), "conversations"))
		}
		c := convs[0].(map[string]any)
		if c["completed"] != tc.completed || c["without_failed_request"] != tc.withoutFailedRequest {
			t.Errorf("%s: summary conversations %v: want completed %v, without_failed_request %v", tc.name, c, tc.completed, tc.withoutFailedRequest)
		}
		for i, cv := range convs {
			c := cv.(map[string]any)
			comp, ok := c["completed"].(float64)
			if !ok {
				t.Errorf("%s: conversations %d has no completed: %v", tc.name, i, c)
				continue
			}
			if f, known := c["finished"].(float64); known && comp != f || !known && comp != c["without_failed_request"] {
				t.Errorf("%s: conversations %d: completed %v, want finished or (records without conversation_end) without_failed_request: %v", tc.name, i, comp, c)
			}
		}
		if f, _ := c["finished"].(float64); tc.finished >= 0 && f != tc.finished {
			t.Errorf("%s: finished %v, want %v", tc.name, c["finished"], tc.finished)
		}
	}
}
