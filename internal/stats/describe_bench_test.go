package stats

import (
	"testing"

	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// BenchmarkDescribeSmall describes the TTFT samples of a small group (a
// conversation's turns), as --by conversation does for every group.
func BenchmarkDescribeSmall(b *testing.B) {
	recs := statstest.Records(statstest.Config{Seed: 2, Run: "bench", Convs: 1, MaxTurns: 12})
	for b.Loop() {
		var s sampleSet
		s.scale = 1e6
		for i := range recs {
			addSample(&s, TTFT, &recs[i])
		}
		s.describe()
	}
}
