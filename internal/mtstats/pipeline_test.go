package mtstats

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// TestReadPipelined checks that decoding ahead in batches accounts exactly
// what reading record by record does: same report bytes, same diagnostics,
// same --strict error, over several inputs with malformed lines,
// duplicates and more records than one batch.
func TestReadPipelined(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 21, Run: "p", Convs: 500, MaxTurns: 10, Warmup: 5, ITL: true, FailEvery: 17})
	if len(recs) < 3*readBatch {
		t.Fatalf("only %d records", len(recs))
	}
	js := statstest.JSONL(t, recs)
	lines := bytes.SplitAfter(js, []byte("\n"))
	var bad bytes.Buffer
	for i, l := range lines {
		bad.Write(l)
		if i%400 == 7 {
			bad.WriteString("{\"run_id\": 12}\n")
		}
	}
	bad.WriteString(`{"run_id":"p","seq":`) // truncated last line
	jsonPath := writeTemp(t, "a.jsonl", bad.Bytes())
	pqPath := writeTemp(t, "b.parquet", statstest.Parquet(t, recs[len(recs)/2:])) // duplicates of a's second half
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"json", Options{Format: report.FormatJSON}},
		{"by-file", Options{Format: report.FormatJSON, By: "file"}},
		{"by-turn-slo", Options{Format: report.FormatCSV, By: "turn", SLO: "ttft_p90<=300ms,turn0:itl_p99<=30ms"}},
		{"strict", Options{Format: report.FormatJSON, Strict: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := func(read func(*collector, *record.Files) error) (string, string, error) {
				var out, errb bytes.Buffer
				o := tc.opts
				o.Inputs = []string{"a=" + jsonPath, pqPath, jsonPath}
				o.Out, o.Err = &out, &errb
				filter, err := stats.ParseFilter(o.Where)
				if err != nil {
					t.Fatal(err)
				}
				objs, err := judge.ParseSLO(o.SLO)
				if err != nil {
					t.Fatal(err)
				}
				c, err := newCollector(&o, filter, objs)
				if err != nil {
					t.Fatal(err)
				}
				err = read(c, &record.Files{Paths: o.Inputs})
				if err == nil {
					err = c.finish(objs, false)
				}
				return out.String(), errb.String(), err
			}
			wantOut, wantErr, wantE := run((*collector).readLive)
			gotOut, gotErr, gotE := run((*collector).readPipelined)
			if gotOut != wantOut {
				t.Errorf("report differs:\n%s\nwant:\n%s", gotOut, wantOut)
			}
			if gotErr != wantErr {
				t.Errorf("stderr differs:\n%s\nwant:\n%s", gotErr, wantErr)
			}
			if (gotE == nil) != (wantE == nil) || (gotE != nil && gotE.Error() != wantE.Error()) {
				t.Errorf("error %v, want %v", gotE, wantE)
			}
			var se *record.SyntaxError
			if tc.opts.Strict != errors.As(wantE, &se) {
				t.Errorf("strict: error %v", wantE)
			}
		})
	}
}
