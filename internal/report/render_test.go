package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/stats"
)

// TestRenderJSONPlain: the JSON report writes '<', '>' and '&' as
// themselves (issue 23: objectives read "ttft_p95\u003c=60ms").
func TestRenderJSONPlain(t *testing.T) {
	t.Parallel()
	slo := func(o string) *judge.SLOReport {
		return &judge.SLOReport{Objectives: []judge.ObjectiveResult{{Objective: o}}}
	}
	// The report's own verdict, and a --compare group's (stats.Group
	// encodes itself).
	rep := &Report{Summary: &stats.Group{}, SLO: slo("ttft_p95<=60ms"), Groups: []*stats.Group{{SLO: slo("a>b&c")}}}
	var b bytes.Buffer
	if err := Render(&b, rep, FormatJSON); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`"objective": "ttft_p95<=60ms"`, `"objective": "a>b&c"`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(out, esc) {
			t.Errorf("JSON holds %s:\n%s", esc, out)
		}
	}
}
