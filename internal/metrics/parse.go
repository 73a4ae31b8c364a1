package metrics

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse reads one exposition in the Prometheus text format and returns
// its samples, sorted by name and labels, with Name, Type, Labels, Value,
// NonFinite, Engine and Canonical set. A histogram gives one sample per
// bucket (NAME_bucket with its le label) plus NAME_sum and NAME_count; a
// summary one per quantile (NAME with its quantile label) plus NAME_sum
// and NAME_count, as they read in the exposition.
func Parse(r io.Reader) ([]Sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	var out []Sample
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		out = appendFamily(out, fams[name])
	}
	slices.SortStableFunc(out, func(a, b Sample) int {
		if a.Name != b.Name {
			if a.Name < b.Name {
				return -1
			}
			return 1
		}
		return compareLabels(a.Labels, b.Labels)
	})
	Tag(out)
	return out, nil
}

func appendFamily(out []Sample, mf *dto.MetricFamily) []Sample {
	name := mf.GetName()
	typ := typeName(mf.GetType())
	eng := EngineOf(name)
	add := func(n string, labels map[string]string, v float64) {
		s := Sample{Name: n, Type: typ, Labels: labels, Engine: eng}
		setValue(&s, v)
		out = append(out, s)
	}
	for _, m := range mf.GetMetric() {
		labels := make(map[string]string, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			add(name, labels, m.GetCounter().GetValue())
		case dto.MetricType_GAUGE:
			add(name, labels, m.GetGauge().GetValue())
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			for _, b := range h.GetBucket() {
				c := b.GetCumulativeCountFloat()
				if c == 0 {
					c = float64(b.GetCumulativeCount())
				}
				add(name+"_bucket", with(labels, "le", b.GetUpperBound()), c)
			}
			add(name+"_sum", labels, h.GetSampleSum())
			c := h.GetSampleCountFloat()
			if c == 0 {
				c = float64(h.GetSampleCount())
			}
			add(name+"_count", labels, c)
		case dto.MetricType_SUMMARY:
			s := m.GetSummary()
			for _, q := range s.GetQuantile() {
				add(name, with(labels, "quantile", q.GetQuantile()), q.GetValue())
			}
			add(name+"_sum", labels, s.GetSampleSum())
			add(name+"_count", labels, float64(s.GetSampleCount()))
		default:
			add(name, labels, m.GetUntyped().GetValue())
		}
	}
	return out
}

// with returns a copy of labels with key set to the float x as the
// exposition format writes it.
func with(labels map[string]string, key string, x float64) map[string]string {
	m := maps.Clone(labels)
	m[key] = formatFloat(x)
	return m
}

func formatFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	case math.IsNaN(x):
		return "NaN"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func setValue(s *Sample, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.Value, s.NonFinite = nil, formatFloat(v)
		return
	}
	s.Value = &v
}

func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	case dto.MetricType_HISTOGRAM:
		return "histogram"
	case dto.MetricType_GAUGE_HISTOGRAM:
		return "gaugehistogram"
	case dto.MetricType_SUMMARY:
		return "summary"
	}
	return "untyped"
}

// LabelKey renders labels in a canonical order, to key a series.
func LabelKey(labels map[string]string) string {
	b := make([]byte, 0, 64)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		b = strconv.AppendQuote(append(append(b, k...), '='), labels[k])
		b = append(b, ',')
	}
	return string(b)
}

func compareLabels(a, b map[string]string) int {
	ka, kb := LabelKey(a), LabelKey(b)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

// notExpositionError is returned by a scrape whose answer is not in the
// exposition format (an HTML page, a JSON 404).
type notExpositionError struct{ contentType string }

func (e *notExpositionError) Error() string {
	return fmt.Sprintf("not a Prometheus text exposition (Content-Type %q)", e.contentType)
}
