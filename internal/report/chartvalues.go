package report

import (
	"html/template"
	"math"
	"strconv"
)

// palette is the colour of each run (or series) of the HTML charts, by
// index; the page script draws with the same list.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// colour is the palette entry of index i.
func colour(i int) string { return palette[i%len(palette)] }

// markColour is the colour of a mark without a run: the text colour.
const markColour = "#5b6475"

// maxTableX is the most x values a chart's table shows one by one (turns,
// stages); a chart with more is summarised (min, mean and max, or
// percentiles).
const maxTableX = 12

// tablePercentiles are the columns of a percentile chart's table.
var tablePercentiles = []struct {
	head string
	x    float64
}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}, {"max", 100}}

// valueTable is the table of values under a chart: one row per series,
// so that a printed page or a screenshot carries the numbers the lines
// show only on hover.
type valueTable struct {
	Head []string
	Rows []valueRow
}

type valueRow struct {
	Label  string
	Colour template.CSS // style of the row's swatch
	Cells  []string
}

// chartTable returns c's table: every x value when there are few (and the
// chart is not a scatter), the percentiles of a percentile chart, else
// min, mean and max of each series.
func chartTable(c ChartSpec) valueTable {
	var t valueTable
	var cells func(s chartSeries) []string
	switch {
	case c.Percentiles:
		t.Head = []string{c.YLabel}
		idx := make([]int, len(tablePercentiles))
		for i, p := range tablePercentiles {
			t.Head = append(t.Head, p.head)
			idx[i] = -1
			for k, x := range c.X {
				if x == p.x {
					idx[i] = k
				}
			}
		}
		cells = func(s chartSeries) []string {
			out := make([]string, len(idx))
			for i, k := range idx {
				out[i] = "–"
				if k >= 0 && s.Y[k] != nil {
					out[i] = chartNum(*s.Y[k])
				}
			}
			return out
		}
	case !c.Scatter && len(c.X) <= maxTableX:
		t.Head = []string{c.XLabel}
		for _, x := range c.X {
			t.Head = append(t.Head, strconv.FormatFloat(x, 'g', 6, 64))
		}
		cells = func(s chartSeries) []string {
			out := make([]string, len(s.Y))
			for i, y := range s.Y {
				out[i] = "–"
				if y != nil {
					out[i] = chartNum(*y)
				}
			}
			return out
		}
	default:
		t.Head = []string{c.YLabel, "min", "mean", "max"}
		cells = func(s chartSeries) []string {
			lo, mean, hi, ok := seriesRange(s)
			if !ok {
				return []string{"–", "–", "–"}
			}
			return []string{chartNum(lo), chartNum(mean), chartNum(hi)}
		}
	}
	for i, s := range c.Series {
		t.Rows = append(t.Rows, valueRow{Label: s.Label, Colour: template.CSS("background:" + colour(s.colourIndex(i))), Cells: cells(s)})
	}
	return t
}

// seriesSummary is what a series' legend entry shows while the pointer
// is off the chart (so a screenshot or a print carries numbers, not
// "–"): p50 and p99 on a percentile chart, else the mean and the max.
func seriesSummary(c ChartSpec, s chartSeries) string {
	if c.Percentiles {
		var p50, p99 string
		for k, x := range c.X {
			if s.Y[k] == nil {
				continue
			}
			switch x {
			case 50:
				p50 = chartNum(*s.Y[k])
			case 99:
				p99 = chartNum(*s.Y[k])
			}
		}
		if p50 != "" && p99 != "" {
			return "p50 " + p50 + " · p99 " + p99
		}
	}
	_, mean, hi, ok := seriesRange(s)
	if !ok {
		return "no data"
	}
	return "mean " + chartNum(mean) + " · max " + chartNum(hi)
}

// seriesRange returns the min, mean and max of a series' values.
func seriesRange(s chartSeries) (lo, mean, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	n := 0
	for _, y := range s.Y {
		if y == nil {
			continue
		}
		lo, hi, mean = min(lo, *y), max(hi, *y), mean+*y
		n++
	}
	if n == 0 {
		return 0, 0, 0, false
	}
	return lo, mean / float64(n), hi, true
}

// chartNum formats a chart value as the page script does: whole numbers
// from 100, two decimals from 1, three significant digits below.
func chartNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// newSeries is a series of its own colour.
func newSeries(label string, y []*float64) chartSeries { return chartSeries{Label: label, Y: y} }
