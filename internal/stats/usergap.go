package stats

import (
	"cmp"
	"slices"

	"github.com/mtkit/mtkit/internal/record"
)

// Metric names of Options.UserGaps: the time between consecutive turns
// of the same client (user), intended (from the records' scheduled
// times) and realised (from their start times). For a replay with mtrun
// --users N --user-gap D, user_gap_intended_ms is D and user_gap_ms shows
// how well the server let each user keep it; --by client gives them per
// user.
const (
	UserGapIntended = "user_gap_intended_ms"
	UserGap         = "user_gap_ms"
)

// clientKey identifies a client (user) of a run's shard.
type clientKey struct {
	run    string
	shard  int
	client int
}

// clientSends keeps every client's turns: intended and actual send times
// (ns) of their first attempts.
type clientSends map[clientKey][][2]int64

// add keeps the send of a turn: its first attempt, choice 0.
func (c clientSends) add(r *record.Record) {
	if r.Attempt != 0 || r.Choice != 0 || r.Scheduled.IsZero() {
		return
	}
	k := clientKey{r.RunID, r.Shard, r.Client}
	c[k] = append(c[k], [2]int64{r.Scheduled.UnixNano(), r.Start.UnixNano()})
}

// metrics describes the gaps between each client's consecutive turns, in
// order of intended send time, over all clients. It sorts in place, so
// the caller holds the collector's lock.
func (c clientSends) metrics() Metrics {
	var intended, actual []float64
	for _, s := range c {
		slices.SortFunc(s, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
		for i := 1; i < len(s); i++ {
			intended = append(intended, Millis(s[i][0]-s[i-1][0]))
			actual = append(actual, Millis(s[i][1]-s[i-1][1]))
		}
	}
	return Metrics{{UserGapIntended, Describe(intended)}, {UserGap, Describe(actual)}}
}
