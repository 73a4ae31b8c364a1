package dist

import (
	"math"
	"testing"
)

func TestPortableMathMatchesStdlib(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{1e-300, 1e-10, 0.001, 0.1, 0.5, 0.7071, 0.9999, 1, 1.0001, 2, math.E, 10, 123.456, 1e10, 1e300} {
		if got, want := plog(x), math.Log(x); math.Abs(got-want) > 2e-16*math.Max(1, math.Abs(want)) {
			t.Errorf("plog(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	for _, x := range []float64{-700, -50, -1, -1e-9, 0, 1e-9, 0.5, 1, 2.5, 10, 100, 700} {
		if got, want := pexp(x), math.Exp(x); math.Abs(got-want) > 4e-16*want {
			t.Errorf("pexp(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	for _, c := range [][2]float64{{2, 10}, {0.5, -1.5}, {10, 0.3}, {1.7, -2.2}} {
		if got, want := ppow(c[0], c[1]), math.Pow(c[0], c[1]); math.Abs(got-want) > 1e-13*want {
			t.Errorf("ppow(%g, %g) = %.17g, want %.17g", c[0], c[1], got, want)
		}
	}
	if !math.IsNaN(plog(-1)) || !math.IsInf(plog(0), -1) || pexp(-1000) != 0 || !math.IsInf(pexp(1000), 1) {
		t.Error("special cases wrong")
	}
}
