package report

import (
	"fmt"
	"strconv"

	"github.com/mtkit/mtkit/internal/stats"
)

// affinity prints the Affinity section.
func (t *textWriter) affinity(a *stats.Affinity) {
	t.heading("Session affinity (backend per request):")
	side := func(s stats.AffinitySide) string {
		return fmt.Sprintf("%d requests, ttft p50 %s ms p90 %s ms, cache hit %s",
			s.Requests, fmtNum(float64(s.TTFTP50Ms)), fmtNum(float64(s.TTFTP90Ms)), fmtPct(s.CacheHitRate))
	}
	t.pairs([][2]string{
		{"backends", strconv.Itoa(a.Backends)},
		{"conversations", fmt.Sprintf("%d (%d changed backend)", a.Conversations, a.Changed)},
		{"user_turns_moved", fmt.Sprintf("%d of %d requests after a conversation's first (%s)", a.Moved, a.Turns, fmtPct(a.MovedShare))},
		{"stayed", side(a.Stayed)},
		{"moved", side(a.MovedTurns)},
	})
}
