package serverstats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHitIntervals puts two replicas scraped at different times on one
// grid: a replica's count (the increase since its first scrape) holds
// from its scrape until its next one.
func TestHitIntervals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		reps []replicaHits
		want []HitInterval
	}{
		{"none", nil, nil},
		{"one replica", []replicaHits{{times: []int64{10, 20, 30}, local: []float64{0, 5, 9}, external: []float64{0, 1, 4}}},
			[]HitInterval{{10, 20, 5, 1}, {20, 30, 4, 3}}},
		{"no local counter", []replicaHits{{times: []int64{10, 20}, external: []float64{2, 7}}},
			[]HitInterval{{10, 20, 0, 5}}},
		{"two replicas", []replicaHits{
			{times: []int64{10, 20, 30}, local: []float64{0, 5, 9}, external: []float64{0, 1, 4}},
			{times: []int64{15, 25}, local: []float64{0, 10}, external: []float64{0, 2}},
		}, []HitInterval{{10, 15, 0, 0}, {15, 20, 5, 1}, {20, 25, 10, 2}, {25, 30, 4, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, hitIntervals(tc.reps)); diff != "" {
				t.Errorf("intervals (-want +got):\n%s", diff)
			}
		})
	}
}
