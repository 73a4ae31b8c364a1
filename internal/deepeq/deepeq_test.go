package deepeq

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type inner struct {
	N    *int64
	L    []int64
	M    map[string]float64
	When *time.Time
}

type outer struct {
	S     string
	B     bool
	U     uint8
	F     float64
	T     time.Time
	In    inner
	Ins   []inner
	Any   any
	hid   int
	Arr   [2]string
	Bytes []byte
}

// TestAgreesWithCmp: Equal says what cmp.Equal with EquateEmpty says, on
// pairs that differ in one place each and on pairs that are equal in
// cmp's sense only (times in other locations, nil against empty).
func TestAgreesWithCmp(t *testing.T) {
	t.Parallel()
	n, m := int64(3), int64(4)
	at := time.Date(2026, 11, 27, 12, 0, 0, 5, time.UTC)
	base := func() outer {
		w := at
		return outer{S: "s", B: true, U: 7, F: 1.5, T: at, In: inner{N: &n, L: []int64{1, 2}, M: map[string]float64{"a": 1}, When: &w},
			Ins: []inner{{L: []int64{9}}}, Any: 5, Arr: [2]string{"x", "y"}, Bytes: []byte("b")}
	}
	for _, tc := range []struct {
		name string
		edit func(o *outer)
	}{
		{"same", func(*outer) {}},
		{"time in another location", func(o *outer) { o.T = at.In(time.FixedZone("x", 3600)) }},
		{"time with a monotonic reading", func(o *outer) { o.T = time.Now(); o.T = at.Add(o.T.Sub(o.T)) }},
		{"nil against empty slice", func(o *outer) { o.Ins[0].L = nil; o.Bytes = []byte{} }},
		{"nil against empty map", func(o *outer) { o.In.M = map[string]float64{}; o.Ins[0].M = nil }},
		{"string", func(o *outer) { o.S = "t" }},
		{"bool", func(o *outer) { o.B = false }},
		{"uint", func(o *outer) { o.U = 8 }},
		{"float", func(o *outer) { o.F = 2 }},
		{"NaN", func(o *outer) { o.F = math.NaN() }},
		{"time", func(o *outer) { o.T = at.Add(1) }},
		{"pointer target", func(o *outer) { o.In.N = &m }},
		{"nil pointer", func(o *outer) { o.In.When = nil }},
		{"slice element", func(o *outer) { o.In.L[1] = 3 }},
		{"slice length", func(o *outer) { o.Ins = append(o.Ins, inner{}) }},
		{"map value", func(o *outer) { o.In.M["a"] = 2 }},
		{"map key", func(o *outer) { o.In.M = map[string]float64{"b": 1} }},
		{"interface type", func(o *outer) { o.Any = "5" }},
		{"array", func(o *outer) { o.Arr[1] = "z" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := base(), base()
			tc.edit(&b)
			want := cmp.Equal(a, b, cmpopts.EquateEmpty(), cmp.AllowUnexported(outer{}))
			if got := Equal(a, b); got != want {
				t.Errorf("Equal %v, cmp.Equal %v", got, want)
			}
		})
	}
	// An unexported field is read when it is a plain value.
	a, b := base(), base()
	b.hid = 1
	if Equal(a, b) {
		t.Error("Equal ignores an unexported int")
	}
}
