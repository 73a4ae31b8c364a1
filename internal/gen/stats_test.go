package gen

import (
	"math"
	"testing"
)

func TestDescribeMatchesPandas(t *testing.T) {
	t.Parallel()
	// pandas: pd.Series(range(1, 11)).describe(percentiles=[.25,.5,.75,.9,.99])
	v := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	d := Describe(v)
	want := Description{Count: 10, Mean: 5.5, Std: 3.0276503540974917, Min: 1, P25: 3.25, P50: 5.5, P75: 7.75, P90: 9.1, P99: 9.91, Max: 10}
	for _, c := range [][2]float64{{d.Mean, want.Mean}, {d.Std, want.Std}, {d.Min, want.Min}, {d.P25, want.P25}, {d.P50, want.P50}, {d.P75, want.P75}, {d.P90, want.P90}, {d.P99, want.P99}, {d.Max, want.Max}} {
		if math.Abs(c[0]-c[1]) > 1e-9 {
			t.Errorf("describe = %+v, want %+v", d, want)
			break
		}
	}
	if e := Describe(nil); e.Count != 0 || !math.IsNaN(e.Mean) {
		t.Errorf("empty describe = %+v", e)
	}
}
