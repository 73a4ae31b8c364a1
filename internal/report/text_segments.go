package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/stats"
)

// segments renders the per-segment view.
func (t *textWriter) segments(rep *stats.SegmentsReport) {
	for _, r := range rep.Runs {
		count := strconv.Itoa(r.Count)
		if r.Inferred {
			count += " (inferred from the shards: no manifest)"
		}
		t.heading(fmt.Sprintf("Segments of run %s:", r.RunID))
		kv := [][2]string{
			{"segments", fmt.Sprintf("%d present of %s", len(r.Segments)-countOutside(r), count)},
			{"start_spread_ms", fmtNum(float64(r.StartSpreadMs))},
		}
		if r.StartAt != "" {
			kv = append(kv, [2]string{"start_at", r.StartAt})
		}
		if len(r.CountConflict) > 0 {
			kv = append(kv, [2]string{"count_conflict", fmt.Sprint(r.CountConflict)})
		}
		kv = append(kv, [2]string{"missing", fmtInts(r.Missing)}, [2]string{"duplicated", fmtInts(r.Duplicated)},
			[2]string{"shared_sessions", strconv.Itoa(r.SharedSessions)})
		for _, d := range r.Disagree {
			kv = append(kv, [2]string{"DISAGREE", d.String()})
		}
		t.pairs(kv)
		header := []string{"segment", "host", "inputs", "requests", "sessions", "start_offset_ms", "lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms"}
		// Client wait beside lateness when the records kept it apart
		// (client_wait_ns; older records did not).
		withWait := slices.ContainsFunc(r.Segments, func(s *stats.SegmentAt) bool { return !math.IsNaN(float64(s.ClientWaitMaxMs)) })
		if withWait {
			header = append(header, "client_wait_p50_ms", "client_wait_p99_ms", "client_wait_max_ms")
		}
		rows := make([][]string, 0, len(r.Segments))
		for _, s := range r.Segments {
			host := s.Host
			if host == "" {
				host = "-"
			}
			row := []string{fmt.Sprintf("%d/%d", s.Index, r.Count), host, strings.Join(s.Inputs, " "),
				strconv.Itoa(s.Requests), strconv.Itoa(s.Sessions), fmtNum(float64(s.StartOffsetMs)),
				fmtNum(float64(s.LatenessP50Ms)), fmtNum(float64(s.LatenessP99Ms)), fmtNum(float64(s.LatenessMaxMs))}
			if withWait {
				row = append(row, fmtNum(float64(s.ClientWaitP50Ms)), fmtNum(float64(s.ClientWaitP99Ms)), fmtNum(float64(s.ClientWaitMaxMs)))
			}
			rows = append(rows, row)
		}
		t.table(header, rows)
	}
}

// countOutside counts the segments whose index is not below the count
// (shards of a different split mixed in).
func countOutside(r *stats.SplitRun) int {
	n := 0
	for _, s := range r.Segments {
		if s.Index < 0 || s.Index >= r.Count {
			n++
		}
	}
	return n
}

func fmtInts(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
