package stats_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// matchCase is an expression and whether it matches a record.
type matchCase struct {
	expr string
	want bool
}

// checkMatch checks each expression against r.
func checkMatch(t *testing.T, r *record.Record, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		f, err := stats.ParseFilter(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := f.Match(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	r := &statstest.Records(statstest.Config{Seed: 7, Run: "r", Convs: 1, MaxTurns: 1})[0]
	r.Turn, r.CachedTokens = 2, nil
	checkMatch(t, r, []matchCase{
		{"turn>0", true}, {"turn>=3", false}, {"turn==2 && phase==measure", true},
		{`error_class==""`, true}, {"error_class!=timeout", true}, {"cached_tokens==null", true},
		{"cached_tokens>0", false}, {"retried==false", true}, {"ttft_ns<1h", true},
		{"conversation_id=conv-000", true}, {"start>2026-05-04", true}, {"itl_ns==0", true},
	})
	for _, bad := range []string{"turn", "nosuch>1", ">1"} {
		if _, err := stats.ParseFilter(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestFilterTyped checks that times compare as instants, durations by
// their value with units, numbers as numbers, and that expressions that
// do not parse are errors naming the problem.
func TestFilterTyped(t *testing.T) {
	t.Parallel()
	r := &statstest.Records(statstest.Config{Seed: 7, Run: "r", Convs: 1, MaxTurns: 1})[0]
	r.Start = time.Date(2026, 11, 23, 18, 21, 8, 500_000_000, time.UTC)
	r.TTFTNs = record.Ptr(int64(600 * time.Millisecond))
	r.Turn, r.Status, r.CachedTokens = 10, 200, nil
	checkMatch(t, r, []matchCase{
		// As strings, "…08.5Z" < "…08Z" and "…T18…" > "…T17…-02:00".
		{"start>=2026-11-23T18:21:08Z", true},
		{"start<2026-11-23T18:21:08Z", false},
		{"start>2026-11-23T17:00:00-02:00", false},
		{"start<2026-11-23T17:00:00-02:00", true},
		{"start==2026-11-23T19:21:08.5+01:00", true},
		{`start=="2026-11-23T18:21:08.500Z"`, true},
		{"start>2026-11-23", true}, {"start<2026-11-24", true},
		{"ttft>500ms", true}, {"ttft>1s", false}, {"ttft == 600ms", true}, {"ttft<0.7s", true},
		{"ttft_ns>500ms", true}, {"ttft_ns>599999999", true}, {"ttft_ns>6e8", false},
		// As strings, "10" < "9".
		{"turn>9", true}, {"turn<9", false}, {"status>=2e2", true},
		{"turn>1&&turn<11", true}, {"turn>1 &&status==404", false},
		{"cached_tokens==null", true}, {"cached_tokens!=null", false},
		{`error_class=="" && phase != warmup`, true},
	})
	for _, tc := range []struct{ expr, want string }{
		{"turn>>1", `turn >: value ">1" starts with an operator`},
		{"turn>1 && ", "want a field name, got \"end of expression\""},
		{"turn>1 || turn<0", "want && or the end after a comparison"},
		{"turn>one", `turn: "one" is not a number`},
		{"turn>", "turn >: missing value"},
		{"turn 1", "after turn: want an operator"},
		{"start>=yesterday", `start: "yesterday" is not an RFC 3339 time`},
		{"start>2026-11-23T18:21:08", "is not an RFC 3339 time"},
		{"ttft>500", `ttft: "500" is not a duration with unit`},
		{"ttft_ns>fast", "is neither a duration with unit"},
		{"retried==maybe", `retried: "maybe" is not true or false`},
		{"cached_tokens>null", "null compares only with == or !="},
		{`phase=="measure`, "unterminated or invalid quoted string"},
		{"turnx>1", `unknown field "turnx"`},
		{"client>1 junk", "want && or the end"},
	} {
		_, err := stats.ParseFilter(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "where: ") {
			t.Errorf("%q: error %v, want one containing %q", tc.expr, err, tc.want)
		}
	}
}

// FuzzParseFilter checks that no expression panics the parser or matcher.
func FuzzParseFilter(f *testing.F) {
	r := &statstest.Records(statstest.Config{Seed: 8, Run: "r", Convs: 1, MaxTurns: 1})[0]
	for _, s := range []string{"turn>0", "a==b && turn<=3", `error_class==""`, "cached_tokens!=null",
		"turn>>1", "start>=2026-11-23T18:21:08Z", "ttft>500ms&&tpot_ns<1e6", `model=="a b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := stats.ParseFilter(s)
		switch {
		case err == nil:
			flt.Match(r)
		case !strings.HasPrefix(err.Error(), "where: "):
			t.Fatalf("%q: error without prefix: %v", s, err)
		}
		judge.ParseSLO(s)
	})
}
