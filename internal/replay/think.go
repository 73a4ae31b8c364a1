package replay

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// ParseThink returns the think-time function of a spec:
//
//	""                   the conversation file's think_time_ms (default)
//	file                 the same, explicitly
//	none                 no think time, even if the file has some
//	constant:2s          always 2s
//	uniform:1s:5s        uniform between 1s and 5s
//	exponential:mean=3s  exponential with mean 3s (also exponential:3s)
//
// requestRate > 0 is vLLM's --request-rate: exponential with mean
// 1/requestRate seconds; it excludes spec. Draws are seeded by seed.
func ParseThink(spec string, requestRate float64, seed uint64) (ThinkFunc, error) {
	rng := rand.New(rand.NewPCG(seed, 0x7468696e6b))
	if requestRate > 0 {
		if spec != "" {
			return nil, fmt.Errorf("--think-time and --request-rate exclude each other")
		}
		mean := float64(time.Second) / requestRate
		return func(time.Duration) time.Duration { return time.Duration(rng.ExpFloat64() * mean) }, nil
	}
	if requestRate < 0 {
		return nil, fmt.Errorf("--request-rate %g is negative", requestRate)
	}
	kind, args, _ := strings.Cut(spec, ":")
	parts := strings.Split(args, ":")
	dur := func(s string) (time.Duration, error) {
		s = strings.TrimPrefix(s, "mean=")
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("think time %q: %q is not a non-negative duration like 2s or 500ms", spec, s)
		}
		return d, nil
	}
	switch kind {
	case "", "file":
		return func(planned time.Duration) time.Duration { return planned }, nil
	case "none":
		return func(time.Duration) time.Duration { return 0 }, nil
	case "constant":
		if len(parts) != 1 {
			break
		}
		d, err := dur(parts[0])
		if err != nil {
			return nil, err
		}
		return func(time.Duration) time.Duration { return d }, nil
	case "uniform":
		if len(parts) != 2 {
			break
		}
		lo, err := dur(parts[0])
		if err != nil {
			return nil, err
		}
		hi, err := dur(parts[1])
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, fmt.Errorf("think time %q: max below min", spec)
		}
		return func(time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }, nil
	case "exponential":
		if len(parts) != 1 {
			break
		}
		mean, err := dur(parts[0])
		if err != nil {
			return nil, err
		}
		return func(time.Duration) time.Duration { return time.Duration(rng.ExpFloat64() * float64(mean)) }, nil
	default:
		return nil, fmt.Errorf("think time %q: unknown kind %q (want file, none, constant, uniform or exponential)", spec, kind)
	}
	return nil, fmt.Errorf("think time %q: wrong number of arguments", spec)
}
