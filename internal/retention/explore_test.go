package retention

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/record"
)

func TestExploreTiers(t *testing.T) {
	path := os.Getenv("RETAN_FILE")
	if path == "" {
		t.Skip()
	}
	f := &record.Files{Paths: []string{path}}
	p := New()
	for f.Scan() {
		p.Add(f.Record(), f.Record().Measured())
	}
	in, _ := os.Open(os.Getenv("RETAN_SERIES"))
	r := metrics.NewReader(in, "s")
	type pt struct{ l, e float64 }
	at := map[int64]*pt{}
	var ts []int64
	for r.Scan() {
		s := r.Sample()
		if s.Value == nil {
			continue
		}
		tt := s.Time.UnixNano()
		q := at[tt]
		if q == nil {
			q = &pt{}
			at[tt] = q
			ts = append(ts, tt)
		}
		switch s.Canonical {
		case metrics.PrefixHits:
			q.l = *s.Value
		case metrics.ExternalPrefixHits:
			q.e = *s.Value
		}
	}
	var ivs []TierInterval
	for k := 1; k < len(ts); k++ {
		a, b := at[ts[k-1]], at[ts[k]]
		ivs = append(ivs, TierInterval{Start: ts[k-1], End: ts[k], Local: b.l - a.l, External: b.e - a.e})
	}
	res := p.Result(Options{Tiers: ivs})
	res.Profile, res.ProfileSeconds = nil, nil
	b, _ := json.MarshalIndent(res, "", " ")
	os.Stdout.Write(b)
}
