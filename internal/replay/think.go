package replay

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mtkit/mtkit/internal/dist"
)

// ParseThink returns the think-time function of a spec:
//
//	"" or file   the conversation file's think_time_ms (default)
//	none         no think time, even if the file has some
//	DIST         a distribution of durations in dist's syntax, e.g.
//	             constant:2s, uniform:1s:5s, exponential:mean=3s,
//	             lognormal:average=2s,max=30s
//
// requestRate > 0 is vLLM's --request-rate: exponential with mean
// 1/requestRate seconds; it excludes spec. Draws come from the session's
// own random source (see ThinkFunc).
func ParseThink(spec string, requestRate float64) (ThinkFunc, error) {
	switch {
	case requestRate < 0:
		return nil, fmt.Errorf("--request-rate %g is negative", requestRate)
	case requestRate > 0 && spec != "":
		return nil, fmt.Errorf("--think-time and --request-rate exclude each other")
	case requestRate > 0:
		mean := float64(time.Second) / requestRate
		return func(_ time.Duration, rng *rand.Rand) time.Duration { return time.Duration(rng.ExpFloat64() * mean) }, nil
	case spec == "" || spec == "file":
		return thinkFile, nil
	case spec == "none":
		return func(time.Duration, *rand.Rand) time.Duration { return 0 }, nil
	}
	d, err := dist.Parse(spec, dist.Seconds)
	if err != nil {
		return nil, fmt.Errorf("think time: %w", err)
	}
	return func(_ time.Duration, rng *rand.Rand) time.Duration {
		return time.Duration(max(d.Sample(rng), 0) * float64(time.Second))
	}, nil
}

// thinkFile is the default think time: the conversation file's.
func thinkFile(planned time.Duration, _ *rand.Rand) time.Duration { return planned }
