package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mtkit/mtkit/internal/serverstats"
)

func fmtCount(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*x, 'f', -1, 64)
}

func fmtGauge(g serverstats.Gauge, pct bool) string {
	if math.IsNaN(float64(g.Mean)) {
		return "n/a"
	}
	if pct {
		return fmt.Sprintf("mean %s, max %s", fmtPct(g.Mean), fmtPct(g.Max))
	}
	return fmt.Sprintf("mean %s, max %s", fmtNum(float64(g.Mean)), fmtNum(float64(g.Max)))
}

// server renders the server metrics section.
func (t *textWriter) server(s *serverstats.Server) {
	if s == nil {
		return
	}
	tot := &s.Total
	t.heading(fmt.Sprintf("Server metrics (%s: %d endpoint(s), %d scrapes, %d failed):", s.File, len(s.Replicas), tot.Scrapes, tot.FailedScrape))
	kv := [][2]string{
		{"cache_hit_rate_server", fmt.Sprintf("%s (prefix-cache hits %s of %s queried tokens)", fmtPct(s.ServerSide), fmtCount(tot.PrefixHits), fmtCount(tot.PrefixQueries))},
		{"cache_hit_rate_client", fmtPct(s.ClientSide)},
	}
	if tot.ExternalHitRate != nil {
		kv = append(kv, [2]string{"external_cache_hit_rate", fmt.Sprintf("%s (hits %s of %s)", fmtPct(*tot.ExternalHitRate), fmtCount(tot.ExternalHits), fmtCount(tot.ExternalQueries))})
	}
	kv = append(kv,
		[2]string{"running", fmtGauge(tot.Running, false)},
		[2]string{"waiting", fmtGauge(tot.Waiting, false)},
		[2]string{"kv_cache_usage", fmtGauge(tot.KVUsage, true)},
		[2]string{"preemptions", fmtCount(tot.Preemptions)},
		[2]string{"prompt_tokens", fmtCount(tot.PromptTokens)},
		[2]string{"generation_tokens", fmtCount(tot.GenerationTokens)},
	)
	t.pairs(kv)
	if len(s.Replicas) > 1 {
		if t.md {
			t.printf("\n")
		}
		rows := make([][]string, len(s.Replicas))
		for i, r := range s.Replicas {
			st := &r.Stats
			rows[i] = []string{strconv.Itoa(r.Replica), r.URL, fmtPct(st.HitRate), fmtNum(float64(st.Running.Mean)),
				fmtNum(float64(st.Waiting.Mean)), fmtPct(st.KVUsage.Mean), fmtCount(st.Preemptions), fmt.Sprintf("%d/%d", r.FailedScrapes, r.Scrapes)}
		}
		t.table([]string{"replica", "url", "hit_rate", "running", "waiting", "kv_usage", "preemptions", "failed"}, rows)
	}
}
