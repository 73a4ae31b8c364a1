package mtstats

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// TestColumnsSameReport: the report read with only the columns the
// options need equals the report read with every column, for the options
// that need more than the summary's (--by a field, --where, --user-gaps,
// --slo), on JSONL and Parquet.
func TestColumnsSameReport(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 9, Run: "r", Convs: 60, MaxTurns: 4, Warmup: 3, FailEvery: 17, ITL: true})
	for i := range recs {
		recs[i].Model = []string{"a", "b"}[i%2]
		recs[i].Status = 200 + i%3
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"r.jsonl": statstest.JSONL(t, recs), "r.parquet": statstest.Parquet(t, recs)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, o := range []Options{
			{},
			{By: "model"},
			{By: "client", UserGaps: true},
			{Where: "status==201 && model==b"},
			{SLO: "ttft_p90<=200ms,itl_p99<=30ms"},
		} {
			o.Inputs = []string{path}
			pruned, _ := runJSON(t, o)
			o.allColumns = true
			all, _ := runJSON(t, o)
			if d := cmp.Diff(all, pruned); d != "" {
				t.Errorf("%s %+v: pruned columns change the report:\n%s", name, o, d)
			}
		}
	}
}
