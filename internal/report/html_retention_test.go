package report

import (
	"slices"
	"testing"

	"github.com/mtkit/mtkit/internal/retention"
)

// TestRetentionChartColours: under --compare each input's retention
// lines (cached, local and external tier, TTFT, idle) and capacity marks
// take the input's colour, the tiers told apart by dashes and dots; a
// single input's lines keep a colour each and its marks none.
func TestRetentionChartColours(t *testing.T) {
	t.Parallel()
	f := func(x float64) *float64 { return &x }
	result := func(capacity float64) *retention.Result {
		cell := retention.Cell{Requests: 3, CachedShare: f(0.5), TTFTP50Ms: f(20), LocalShare: f(0.3), ExternalShare: f(0.2)}
		return &retention.Result{Basis: retention.BasisCachedTokens, CapacityTokens: f(capacity),
			Profile:        []retention.TokenBucket{{Lo: 0, Hi: 1000, Cell: cell}, {Lo: 1000, Hi: 2000, Cell: cell}},
			ProfileSeconds: []retention.SecondsBucket{{Lo: 0, Hi: 1, Cell: cell}},
			Tiers:          &retention.Tiers{LocalCapacityTokens: f(capacity / 2)}}
	}
	run0, run1 := 0, 1
	type line struct {
		colour    int
		dash, dot bool
	}
	for _, tc := range []struct {
		name  string
		rets  []LabeledRetention
		share []line // the cached share chart's lines
		ttft  []line
		marks []*int // the colour of the share chart's marks
	}{
		{"one input", []LabeledRetention{{"a", result(4000)}},
			[]line{{0, false, false}, {1, false, false}, {2, false, false}}, []line{{0, false, false}}, []*int{nil, nil}},
		{"two inputs", []LabeledRetention{{"a", result(4000)}, {"b", result(8000)}},
			[]line{{0, false, false}, {0, true, false}, {0, false, true}, {1, false, false}, {1, true, false}, {1, false, true}},
			[]line{{0, false, false}, {1, false, false}}, []*int{&run0, &run0, &run1, &run1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			charts := retentionCharts(tc.rets)
			if len(charts) != 3 {
				t.Fatalf("%d charts, want 3", len(charts))
			}
			lines := func(c ChartSpec) []line {
				var out []line
				for k, s := range c.Series {
					out = append(out, line{s.colourIndex(k), s.Dash, s.Dot})
				}
				return out
			}
			for _, c := range []struct {
				chart ChartSpec
				want  []line
			}{{charts[0], tc.share}, {charts[1], tc.ttft}, {charts[2], tc.ttft}} {
				if got := lines(c.chart); !slices.Equal(got, c.want) {
					t.Errorf("%s: lines %v, want %v", c.chart.Title, got, c.want)
				}
			}
			if len(charts[0].Marks) != len(tc.marks) {
				t.Fatalf("%d marks, want %d", len(charts[0].Marks), len(tc.marks))
			}
			for k, m := range charts[0].Marks {
				if (m.Colour == nil) != (tc.marks[k] == nil) || m.Colour != nil && *m.Colour != *tc.marks[k] {
					t.Errorf("mark %q: colour %v, want %v", m.Label, m.Colour, tc.marks[k])
				}
			}
		})
	}
}
