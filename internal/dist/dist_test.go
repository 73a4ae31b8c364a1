package dist

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestDistMoments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec      string
		unit      Unit
		mean, std float64 // expected; std < 0 skips the check
		min, max  float64 // bounds of every sample
		integer   bool
	}{
		{"constant:100", Count, 100, 0, 100, 100, true},
		{"42", Count, 42, 0, 42, 42, true},
		{"uniform:4:10", Count, 7, math.Sqrt((7*7 - 1) / 12.0), 4, 10, true},
		{"uniform:min=1.5,max=3.5", Count, 2.5, 2 / math.Sqrt(12), 1.5, 3.5, false},
		{"lognormal:average=500,median_ratio=0.8", Count, 500, 500 * math.Sqrt(1/(0.8*0.8)-1), 0, math.Inf(1), false},
		{"lognormal:avg=500,max=600", Count, -1, -1, 0, 600, false},
		{"lognormal:mean=1,sigma=0.5", Count, math.Exp(1 + 0.125), math.Exp(1+0.125) * math.Sqrt(math.Exp(0.25)-1), 0, math.Inf(1), false},
		{"poisson:7", Count, 7, math.Sqrt(7), 0, math.Inf(1), true},
		{"poisson:alpha=2500", Count, 2500, 50, 0, math.Inf(1), true},
		{"poisson:alpha=0.3", Count, 0.3, math.Sqrt(0.3), 0, math.Inf(1), true},
		{"poisson:alpha=50,max=45", Count, -1, -1, 0, 45, true},
		{"zipf:alpha=3", Count, 1.6449340668 / 1.2020569032, -1, 1, math.Inf(1), true},
		{"zipf:2:10", Count, -1, -1, 1, 10, true},
		{"exponential:mean=2s", Seconds, 2, 2, 0, math.Inf(1), false},
		{"exponential:250ms:1s", Seconds, -1, -1, 0, 1, false},
		{"uniform:1:3", Seconds, 2, 2 / math.Sqrt(12), 1, 3, false},
		{"uniform:500ms:1.5s", Seconds, 1, 1 / math.Sqrt(12), 0.5, 1.5, false},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			d, err := Parse(tt.spec, tt.unit)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			const n = 200000
			v := make([]float64, n)
			for i := range v {
				x := d.Sample(r)
				if x < tt.min || x > tt.max || math.IsNaN(x) {
					t.Fatalf("sample %g outside [%g, %g]", x, tt.min, tt.max)
				}
				if tt.integer && x != math.Trunc(x) {
					t.Fatalf("sample %g is not an integer", x)
				}
				v[i] = x
			}
			desc := describe(v)
			if tt.mean >= 0 && math.Abs(desc.Mean-tt.mean) > 0.02*math.Max(tt.mean, 1) {
				t.Errorf("mean %g, want %g", desc.Mean, tt.mean)
			}
			if tt.std >= 0 && math.Abs(desc.Std-tt.std) > 0.03*math.Max(tt.std, 0.1) {
				t.Errorf("std %g, want %g", desc.Std, tt.std)
			}
			if desc.Max < tt.max && !math.IsInf(tt.max, 1) && tt.min != tt.max && d.Kind != Uniform {
				t.Errorf("clamp %g never reached (max sample %g)", tt.max, desc.Max)
			}
			// String round-trips.
			d2, err := Parse(d.String(), tt.unit)
			if err != nil || d2.String() != d.String() {
				t.Errorf("String() = %q re-parses to %q, %v", d.String(), d2.String(), err)
			}
		})
	}
}

// TestUniformIntegerInclusive checks both bounds occur, as numpy's
// randint(min, max+1) does in vLLM.
func TestUniformIntegerInclusive(t *testing.T) {
	t.Parallel()
	d, err := Parse("uniform:12:18", Count)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]int{}
	r := rand.New(rand.NewPCG(3, 4))
	for range 7000 {
		seen[d.Sample(r)]++
	}
	for v := 12.0; v <= 18; v++ {
		if seen[v] < 800 {
			t.Errorf("value %g drawn %d times of 7000", v, seen[v])
		}
	}
	if len(seen) != 7 {
		t.Errorf("values %v", seen)
	}
}

// TestZipfLargeAlpha: a zipf exponent so large that 2^(alpha-1)
// overflows samples 1 (all the mass) instead of looping for ever (found
// by FuzzParseDist: "zipf:10011").
func TestZipfLargeAlpha(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"zipf:1000", "zipf:1024", "zipf:1025.5", "zipf:10011", "zipf:1e300"} {
		d, err := Parse(spec, Count)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan float64, 1)
		go func() {
			r := rand.New(rand.NewPCG(1, 2))
			x := 1.0
			for range 100 {
				x = max(x, d.Sample(r))
			}
			got <- x
		}()
		select {
		case x := <-got:
			if x != 1 {
				t.Errorf("%s: sampled %g, want only 1", spec, x)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: Sample did not return", spec)
		}
	}
}

func TestParseDistErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec string
		unit Unit
		want string
	}{
		{"", Count, "empty distribution"},
		{"gauss:1", Count, `unknown distribution "gauss"`},
		{"uniform:5", Count, "max: missing"},
		{"uniform:5:1", Count, "max: 1 is less than min 5"},
		{"uniform:-1:5", Count, "min: -1 is negative"},
		{"uniform:1:2:3", Count, "at most 2 positional values"},
		{"constant:x", Count, `value: "x" is not a number`},
		{"constant:2s", Count, `"2s" is not a number`},
		{"constant:NaN", Count, "not a finite number"},
		{"lognormal:avg=0", Count, "average: must be positive"},
		{"lognormal:avg=10,median_ratio=1", Count, "median_ratio: must be in (0, 1)"},
		{"lognormal:avg=10,sigma=1", Count, "sigma: cannot be combined with average"},
		{"lognormal:mean=1", Count, "sigma: missing"},
		{"lognormal:sigma=1", Count, "needs average"},
		{"lognormal:median_ratio=0.5", Count, "median_ratio: needs average"},
		{"zipf:1", Count, "alpha: must be greater than 1"},
		{"poisson:-1", Count, "alpha: must be in [0"},
		{"exponential:mean=0", Seconds, "mean: must be positive"},
		{"exponential:mean=2x", Seconds, "is not a number or a duration"},
		{"uniform:min=1,min=2", Count, "min: given twice"},
		{"uniform:min=1,maxx=2", Count, "maxx: unknown field (uniform takes min, max)"},
		{"uniform:min", Count, `min: "min" is not a number`},
		{"uniform:min=1,max", Count, `"max" is not key=value`},
		{"zipf:alpha=2,max=-3", Count, "max: -3 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.spec, tt.unit)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error %v, want one containing %q", tt.spec, err, tt.want)
			}
		})
	}
}

func TestCountOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    float64
		want int64
	}{{0.5, 0}, {1.5, 2}, {2.5, 2}, {2.6, 3}, {-3, 0}, {1e300, 1 << 62}} {
		if got := CountOf(c.x); got != c.want {
			t.Errorf("CountOf(%g) = %d, want %d", c.x, got, c.want)
		}
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"constant:100", "uniform:4:10", "uniform:1.5:2", "lognormal:avg=500,median_ratio=0.8,max=2000",
		"lognormal:mean=1,sigma=2", "zipf:2.5:100", "poisson:alpha=3", "exponential:mean=2s", "7", "exp:1m30s:5m", ":", "=,="} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, spec string, seconds bool) {
		unit := Count
		if seconds {
			unit = Seconds
		}
		d, err := Parse(spec, unit)
		if err != nil {
			return
		}
		s := d.String()
		d2, err := Parse(s, unit)
		if err != nil {
			t.Fatalf("%q parsed, but its String %q does not: %v", spec, s, err)
		}
		if d2.String() != s {
			t.Fatalf("%q: String %q re-parses as %q", spec, s, d2.String())
		}
		if d.Kind == Poisson && d.Alpha > 1e6 || d.Kind == Zipf && d.Alpha < 1.01 {
			return // slow to sample; parsing is what is fuzzed
		}
		r := rand.New(rand.NewPCG(1, 1))
		for range 3 {
			if x := d.Sample(r); math.IsNaN(x) || x < 0 {
				t.Fatalf("%q sampled %g", spec, x)
			}
		}
	})
}

type description struct{ Mean, Std, Max float64 }

// describe is the sample mean, standard deviation (n-1) and maximum.
func describe(v []float64) description {
	var d description
	d.Max = math.Inf(-1)
	for _, x := range v {
		d.Mean += x
		d.Max = math.Max(d.Max, x)
	}
	d.Mean /= float64(len(v))
	for _, x := range v {
		d.Std += (x - d.Mean) * (x - d.Mean)
	}
	d.Std = math.Sqrt(d.Std / float64(len(v)-1))
	return d
}
