package mtstats

import (
	"io"
	"reflect"
	"testing"

	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// TestByKeepsSamplesOnce: with --by and the per-group table (or --only),
// the summary keeps no TTFT, ITL or latency sample of its own (each is
// kept by its group) and still reports what it reports without --by.
func TestByKeepsSamplesOnce(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 6, Run: "r", Convs: 90, MaxTurns: 6, Warmup: 3, FailEvery: 11, ITL: true})
	path := writeTemp(t, "r.jsonl", statstest.JSONL(t, recs))
	for _, o := range []Options{{By: "turn"}, {By: "conversation"}, {By: "turn", Only: "ttft,itl,tpot,input_num_tokens"}} {
		only, _ := stats.ParseOnly(o.Only)
		o.only, o.Err = only, io.Discard
		c, err := newCollector(&o, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := c.add(nil, &recs[i], "r", "r.jsonl"); err != nil {
				t.Fatal(err)
			}
		}
		kept := stats.LiteMetrics
		if only != nil {
			kept = only
		}
		for _, m := range kept {
			if own, parts, all := c.all.SampleCounts(m); own != 0 || parts != len(c.groups) || all == 0 {
				t.Errorf("--by %s --only %q: the summary's %s holds %d samples of its own and %d parts (%d groups), %d in all",
					o.By, o.Only, stats.MetricNames[m], own, parts, len(c.groups), all)
			}
		}
		o.Inputs = []string{path}
		by, _ := runJSON(t, o)
		o.By = ""
		plain, _ := runJSON(t, o)
		if !reflect.DeepEqual(by["summary"], plain["summary"]) {
			t.Errorf("--by %s --only %q: the summary differs from the one without --by:\n%v\n%v", o.By, o.Only, by["summary"], plain["summary"])
		}
	}
}
