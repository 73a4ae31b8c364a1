// Package dist parses and samples the random distributions of mtkit
// workloads (constant, uniform, lognormal, zipf, poisson, exponential), as
// written in vLLM's generate_conversations config or in the compact flag
// syntax (see Syntax). Sampling uses portable math so a seed gives the same
// values on every machine.
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Kind names a distribution family.
type Kind string

// The distribution families. The first five are those of vLLM's
// generate_conversations config; Exponential is an mtkit extension (think
// times are usually exponential).
const (
	Constant    Kind = "constant"
	Uniform     Kind = "uniform"
	Lognormal   Kind = "lognormal"
	Zipf        Kind = "zipf"
	Poisson     Kind = "poisson"
	Exponential Kind = "exponential"
)

// defaultMedianRatio is vLLM's default median/mean ratio of a lognormal
// given by its average.
const defaultMedianRatio = 0.85

// maxPoissonAlpha bounds the Poisson mean so that its table stays small.
const maxPoissonAlpha = 1e9

// Dist is a random distribution of non-negative values: token counts, turn
// counts or think times (in seconds). Build one with Parse or from a
// config file; the zero Dist is invalid. A Dist is immutable once built and
// safe for concurrent use; the randomness comes from the *rand.Rand passed
// to Sample.
type Dist struct {
	// Kind is the family.
	Kind Kind
	// Value is the constant's value.
	Value float64
	// Min and Max bound a uniform distribution. For lognormal, zipf,
	// poisson and exponential, Max > 0 clamps samples to at most Max
	// (samples above it become Max, as in vLLM); 0 means no clamp.
	Min, Max float64
	// Integer makes a uniform distribution draw integers from Min to Max
	// inclusive (vLLM does so when both bounds are written as integers);
	// otherwise it is continuous on [Min, Max).
	Integer bool
	// Average and MedianRatio give a lognormal by its mean and its
	// median/mean ratio (0 < MedianRatio < 1); Average == 0 means the
	// lognormal is given by Mu and Sigma instead.
	Average, MedianRatio float64
	// Mu and Sigma are the mean and standard deviation of the lognormal's
	// underlying normal distribution (numpy's mean and sigma).
	Mu, Sigma float64
	// Alpha is the zipf exponent (> 1) or the poisson mean (>= 0).
	Alpha float64
	// Mean is the exponential's mean.
	Mean float64

	// Derived at build time.
	mu, sigma float64   // lognormal parameters actually sampled
	cdf       []float64 // poisson cumulative weights of lo, lo+1, ...
	lo        int
}

// Sample draws one value. Only IEEE-754 arithmetic with explicit rounding
// and the portable plog/pexp are used, so a seeded r gives the same values
// on every platform.
func (d *Dist) Sample(r *rand.Rand) float64 {
	var x float64
	switch d.Kind {
	case Constant:
		return d.Value
	case Uniform:
		if d.Integer {
			lo, hi := int64(d.Min), int64(d.Max)
			return float64(lo + r.Int64N(hi-lo+1))
		}
		return float64((d.Max-d.Min)*r.Float64()) + d.Min
	case Lognormal:
		x = pexp(float64(d.sigma*normal(r)) + d.mu)
	case Zipf:
		x = zipf(r, d.Alpha)
	case Poisson:
		x = d.poisson(r)
	case Exponential:
		x = float64(-d.Mean * plog(1-r.Float64()))
	}
	if d.Max > 0 && x > d.Max {
		x = d.Max
	}
	return x
}

// normal draws a standard normal value with Marsaglia's polar method (only
// log and sqrt, both portable); the second value of each pair is dropped.
func normal(r *rand.Rand) float64 {
	for {
		u := float64(2*r.Float64()) - 1
		v := float64(2*r.Float64()) - 1
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			return u * math.Sqrt(float64(-2*plog(s))/s)
		}
	}
}

// zipf draws from the zeta distribution with exponent a > 1 by Devroye's
// rejection method, the algorithm numpy.random.zipf uses.
func zipf(r *rand.Rand, a float64) float64 {
	am1 := a - 1
	b := ppow(2, am1)
	if math.IsInf(b, 1) {
		// P(X > 1) is below 2^-1023: the draw is 1, and the rejection
		// test below would compare Inf/Inf forever.
		return 1
	}
	for {
		u := 1 - r.Float64()
		v := r.Float64()
		x := math.Floor(ppow(u, -1/am1))
		if x > 1<<53 || x < 1 {
			continue
		}
		t := ppow(1+1/x, am1)
		if float64(float64(v*x)*(t-1))/(b-1) <= t/b {
			return x
		}
	}
}

// poisson draws by inverting the precomputed cumulative table.
func (d *Dist) poisson(r *rand.Rand) float64 {
	if len(d.cdf) == 0 {
		return 0
	}
	total := d.cdf[len(d.cdf)-1]
	u := float64(r.Float64() * total)
	i := sort.Search(len(d.cdf), func(i int) bool { return d.cdf[i] > u })
	if i == len(d.cdf) {
		i--
	}
	return float64(d.lo + i)
}

// poissonTable returns the cumulative weights of a Poisson(alpha)
// distribution over the values lo.. where the weights are not negligible
// (relative weight above 1e-18 of the mode's). Only products, quotients and
// sums are used, so the table is bit-identical everywhere.
func poissonTable(alpha float64) (lo int, cdf []float64) {
	if alpha <= 0 {
		return 0, nil
	}
	const tiny = 1e-18
	m := int(math.Floor(alpha))
	var down []float64 // weights of m-1, m-2, ...
	w := 1.0
	for k := m; k > 0; k-- {
		w = float64(w*float64(k)) / alpha
		if w < tiny {
			break
		}
		down = append(down, w)
	}
	lo = m - len(down)
	cdf = make([]float64, 0, 2*len(down)+64)
	sum := 0.0
	for i := len(down) - 1; i >= 0; i-- {
		sum += down[i]
		cdf = append(cdf, sum)
	}
	w = 1.0
	for k := m; ; k++ {
		sum += w
		cdf = append(cdf, sum)
		w = float64(w*alpha) / float64(k+1)
		if w < tiny {
			break
		}
	}
	return lo, cdf
}

// Params lists the keys a distribution kind accepts (in config files and
// in key=value flag syntax), in the order of its positional flag syntax.
var kindParams = map[Kind][]string{
	Constant:    {"value"},
	Uniform:     {"min", "max"},
	Lognormal:   {"average", "median_ratio", "max", "mean", "sigma"},
	Zipf:        {"alpha", "max"},
	Poisson:     {"alpha", "max"},
	Exponential: {"mean", "max"},
}

// kinds lists the kinds in documentation order.
var kinds = []Kind{Constant, Uniform, Lognormal, Zipf, Poisson, Exponential}

// Param is one parameter of a distribution as written by the user.
type Param struct {
	Key   string
	Val   float64
	IsInt bool // written as an integer (no '.', exponent or unit)
	Null  bool // JSON null: same as absent (vLLM treats "max": null as no max)
}

// ParamError is a problem with one parameter (Key) or with the whole
// distribution (Key == "").
type ParamError struct {
	Key string
	Msg string
}

func (e *ParamError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

func perr(key, format string, args ...any) error {
	return &ParamError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Build validates the parameters of a kind and returns the Dist. It is
// shared by the flag syntax and the config file so both accept exactly the
// same distributions.
func Build(kind Kind, params []Param) (Dist, error) {
	allowed, ok := kindParams[kind]
	if !ok {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		return Dist{}, perr("", "unknown distribution %q (want %s)", kind, strings.Join(names, ", "))
	}
	got := map[string]Param{}
	for _, p := range params {
		if !contains(allowed, p.Key) {
			return Dist{}, perr(p.Key, "unknown field (%s takes %s)", kind, strings.Join(allowed, ", "))
		}
		if _, dup := got[p.Key]; dup {
			return Dist{}, perr(p.Key, "given twice")
		}
		if !p.Null && (math.IsNaN(p.Val) || math.IsInf(p.Val, 0)) {
			return Dist{}, perr(p.Key, "must be a finite number")
		}
		if !p.Null {
			got[p.Key] = p
		}
	}
	need := func(key string) (Param, error) {
		p, ok := got[key]
		if !ok {
			return p, perr(key, "missing (%s needs it)", kind)
		}
		return p, nil
	}
	nonNeg := func(key string) (float64, error) {
		p, ok := got[key]
		if !ok {
			return 0, nil
		}
		if p.Val < 0 {
			return 0, perr(key, "%g is negative", p.Val)
		}
		return p.Val, nil
	}
	d := Dist{Kind: kind}
	var err error
	if kind != Uniform {
		if d.Max, err = nonNeg("max"); err != nil {
			return Dist{}, err
		}
	}
	switch kind {
	case Constant:
		p, err := need("value")
		if err != nil {
			return Dist{}, err
		}
		if p.Val < 0 {
			return Dist{}, perr("value", "%g is negative", p.Val)
		}
		d.Value = p.Val
	case Uniform:
		lo, err := need("min")
		if err != nil {
			return Dist{}, err
		}
		hi, err := need("max")
		if err != nil {
			return Dist{}, err
		}
		if lo.Val < 0 {
			return Dist{}, perr("min", "%g is negative", lo.Val)
		}
		if hi.Val < lo.Val {
			return Dist{}, perr("max", "%g is less than min %g", hi.Val, lo.Val)
		}
		d.Min, d.Max, d.Integer = lo.Val, hi.Val, lo.IsInt && hi.IsInt
		if d.Integer && hi.Val > 1<<53 {
			return Dist{}, perr("max", "%g is too large", hi.Val)
		}
	case Lognormal:
		if avg, ok := got["average"]; ok {
			if _, ok := got["mean"]; ok {
				return Dist{}, perr("mean", "cannot be combined with average (give average and median_ratio, or mean and sigma)")
			}
			if _, ok := got["sigma"]; ok {
				return Dist{}, perr("sigma", "cannot be combined with average (give average and median_ratio, or mean and sigma)")
			}
			if avg.Val <= 0 {
				return Dist{}, perr("average", "must be positive, got %g", avg.Val)
			}
			d.Average, d.MedianRatio = avg.Val, defaultMedianRatio
			if r, ok := got["median_ratio"]; ok {
				if r.Val <= 0 || r.Val >= 1 {
					return Dist{}, perr("median_ratio", "must be in (0, 1), got %g", r.Val)
				}
				d.MedianRatio = r.Val
			}
			d.mu = plog(float64(d.Average * d.MedianRatio))
			d.sigma = math.Sqrt(float64(-2 * plog(d.MedianRatio)))
			break
		}
		if _, ok := got["median_ratio"]; ok {
			return Dist{}, perr("median_ratio", "needs average")
		}
		mu, err := need("mean")
		if err != nil {
			return Dist{}, perr("", "lognormal needs average (and optionally median_ratio), or mean and sigma")
		}
		sg, err := need("sigma")
		if err != nil {
			return Dist{}, err
		}
		if sg.Val < 0 {
			return Dist{}, perr("sigma", "%g is negative", sg.Val)
		}
		if mu.Val > 700 {
			return Dist{}, perr("mean", "%g is too large (samples would overflow)", mu.Val)
		}
		d.Mu, d.Sigma, d.mu, d.sigma = mu.Val, sg.Val, mu.Val, sg.Val
	case Zipf:
		a, err := need("alpha")
		if err != nil {
			return Dist{}, err
		}
		if a.Val <= 1 {
			return Dist{}, perr("alpha", "must be greater than 1, got %g", a.Val)
		}
		d.Alpha = a.Val
	case Poisson:
		a, err := need("alpha")
		if err != nil {
			return Dist{}, err
		}
		if a.Val < 0 || a.Val > maxPoissonAlpha {
			return Dist{}, perr("alpha", "must be in [0, %g], got %g", float64(maxPoissonAlpha), a.Val)
		}
		d.Alpha = a.Val
		d.lo, d.cdf = poissonTable(a.Val)
	case Exponential:
		m, err := need("mean")
		if err != nil {
			return Dist{}, err
		}
		if m.Val <= 0 {
			return Dist{}, perr("mean", "must be positive, got %g", m.Val)
		}
		d.Mean = m.Val
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String returns the distribution in the flag syntax; Parse of the
// result gives the same distribution.
func (d Dist) String() string {
	var b strings.Builder
	b.WriteString(string(d.Kind))
	b.WriteByte(':')
	kv := func(k string, v float64) {
		if b.Len() > len(d.Kind)+1 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(fmtFloat(v))
	}
	switch d.Kind {
	case Constant:
		b.WriteString(fmtNum(d.Value))
	case Uniform:
		if d.Integer {
			b.WriteString(strconv.FormatInt(int64(d.Min), 10) + ":" + strconv.FormatInt(int64(d.Max), 10))
		} else {
			b.WriteString(fmtFloat(d.Min) + ":" + fmtFloat(d.Max))
		}
		return b.String()
	case Lognormal:
		if d.Average > 0 {
			kv("average", d.Average)
			kv("median_ratio", d.MedianRatio)
		} else {
			kv("mean", d.Mu)
			kv("sigma", d.Sigma)
		}
	case Zipf, Poisson:
		kv("alpha", d.Alpha)
	case Exponential:
		kv("mean", d.Mean)
	default:
		return "invalid"
	}
	if d.Kind != Constant && d.Max > 0 {
		kv("max", d.Max)
	}
	return b.String()
}

// fmtNum formats v in the shortest form that parses back to v.
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fmtFloat formats v so that it parses back to v and reads as a
// non-integer (a uniform with such bounds stays continuous).
func fmtFloat(v float64) string {
	s := fmtNum(v)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// CountOf converts a sampled value to a count: rounded half to even (as
// numpy's round), never negative.
func CountOf(x float64) int64 {
	x = math.RoundToEven(x)
	if x < 0 {
		return 0
	}
	if x > 1<<62 {
		return 1 << 62
	}
	return int64(x)
}
