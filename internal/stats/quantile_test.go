package stats

import (
	"math"
	"slices"
	"testing"
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	one := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		// pandas: pd.Series(range(1, 11)).quantile(p)
		{one, 0.1, 1.9}, {one, 0.25, 3.25}, {one, 0.5, 5.5}, {one, 0.75, 7.75},
		{one, 0.9, 9.1}, {one, 0.99, 9.91}, {one, 0, 1}, {one, 1, 10},
		// R: quantile(c(1,3,5,7,11,13,17), 0.3, type=7) = 4.6
		{[]float64{1, 3, 5, 7, 11, 13, 17}, 0.3, 4.6},
		{[]float64{0, 10}, 0.333, 3.33},
		{[]float64{42}, 0.99, 42},
	} {
		if got := Quantile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Quantile(%v, %g) = %g, want %g", tc.xs, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty: want NaN")
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	// pandas: pd.Series([10, 1, 4, 3, 2]).describe()
	d := Describe([]float64{10, 1, 4, 3, 2})
	want := Description{Count: 5, Mean: 4, Std: math.Sqrt(12.5), Min: 1, P25: 2, P50: 3, P75: 4, P90: 7.6, P99: 9.76, Max: 10}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"mean", d.Mean, want.Mean}, {"std", d.Std, want.Std}, {"min", d.Min, want.Min},
		{"p25", d.P25, want.P25}, {"p50", d.P50, want.P50}, {"p75", d.P75, want.P75},
		{"p90", d.P90, want.P90}, {"p99", d.P99, want.P99}, {"max", d.Max, want.Max},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if d.HasP999 {
		t.Error("p99.9 with 5 samples")
	}
	if one := Describe([]float64{3}); !math.IsNaN(one.Std) || one.Mean != 3 {
		t.Errorf("one sample: %+v", one)
	}
	big := make([]float64, 10000)
	for i := range big {
		big[i] = float64(i + 1)
	}
	db := Describe(big)
	// h = 9999 * 0.999 = 9989.001 → 9990 + 0.001; h = 9999*0.9999 = 9998.0001
	if !db.HasP999 || !db.HasP9999 || math.Abs(db.P999-9990.001) > 1e-6 || math.Abs(db.P9999-9999.0001) > 1e-6 {
		t.Errorf("tail percentiles: %v %v %v %v", db.HasP999, db.P999, db.HasP9999, db.P9999)
	}
	// Large offset: the two-pass standard deviation stays accurate.
	off := Describe([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3})
	if math.Abs(off.Std-1) > 1e-9 {
		t.Errorf("std with offset = %g, want 1", off.Std)
	}
}

func TestSampleSet(t *testing.T) {
	t.Parallel()
	var s sampleSet
	var want []float64
	for i := range 3*blockMax + 17 {
		x := int64((i * 7919) % 1000)
		s.add(x)
		want = append(want, float64(x))
		if i == blockMax+5 {
			if got := s.values(); !slices.Equal(got, want) {
				t.Fatal("values after two blocks differ")
			}
		}
	}
	if s.Len() != len(want) || !slices.Equal(s.values(), want) || s.wide {
		t.Fatalf("len %d, wide %v", s.Len(), s.wide)
	}
	d := s.describe()
	if d.Count != len(want) || d.Max != 999 || d.Min != 0 {
		t.Fatalf("describe: count %d, min %v, max %v", d.Count, d.Min, d.Max)
	}
	sorted := slices.Sorted(slices.Values(want))
	if q, w := d.Quantile(0.3), Quantile(sorted, 0.3); q != w || len(s.b32) != 1 {
		t.Fatalf("Q(0.3) = %v, want %v (%d blocks after the sort)", q, w, len(s.b32))
	}
}

// TestSampleSetWiden: samples are int32 until one does not fit, then
// int64, in order, none lost; the scale turns ns into ms.
func TestSampleSetWiden(t *testing.T) {
	t.Parallel()
	s := sampleSet{scale: 1e6}
	for i := range 1000 {
		s.add(int64(i) * 1e6)
	}
	if s.wide || s.Len() != 1000 {
		t.Fatal("int32 samples widened the set")
	}
	s.add(math.MaxInt32)
	if s.wide {
		t.Fatal("MaxInt32 widened the set")
	}
	s.add(math.MaxInt32 + 1) // does not fit: widens
	s.add(-5e6)
	got := s.values()
	if !s.wide || len(got) != 1003 || got[999] != 999 || got[1000] != math.MaxInt32/1e6 || got[1001] != (math.MaxInt32+1)/1e6 || got[1002] != -5 {
		t.Fatalf("wide=%v len=%d tail=%v", s.wide, len(got), got[998:])
	}
	d := s.describe()
	if d.Min != -5 || d.Max != (math.MaxInt32+1)/1e6 || d.P50 != 500 {
		t.Fatalf("min %v max %v p50 %v", d.Min, d.Max, d.P50)
	}
}

// TestSampleSetAddAll: adding a list at once is adding each sample, over
// block boundaries and through widening.
func TestSampleSetAddAll(t *testing.T) {
	t.Parallel()
	var one, all sampleSet
	var xs []int64
	for i := range 3*blockMax + 100 {
		x := int64(i % 5000)
		if i == 2*blockMax+7 {
			x = math.MaxInt32 + 9 // widens mid-list
		}
		xs = append(xs, x)
	}
	for _, part := range [][]int64{xs[:10], xs[10 : blockMax+3], xs[blockMax+3 : 2*blockMax+50], xs[2*blockMax+50:]} {
		all.addAll(part)
		for _, x := range part {
			one.add(x)
		}
		if !slices.Equal(all.values(), one.values()) || all.Len() != one.Len() || all.wide != one.wide {
			t.Fatalf("after %d samples: addAll differs from add (wide %v/%v)", one.Len(), all.wide, one.wide)
		}
	}
	if !all.wide {
		t.Fatal("a sample beyond int32 did not widen the set")
	}
}
