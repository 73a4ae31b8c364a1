package retention

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/record"
)

// TestResultGolden pins the whole Result, as mtstats writes it in JSON
// (cache_retention), of fixed inputs that exercise every part of the
// analysis: the cached_tokens basis with tiers, the ttft basis, and
// overlapping requests with shared prefixes, stages, failed attempts,
// warmup-like uncounted requests and two runs. Speed-ups of the pass must
// leave every figure bit for bit as it was (go test -update rewrites
// testdata/result-*.golden.json).
func TestResultGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		res  func() *Result
	}{
		{"tiers", func() *Result {
			recs := run(t, 30000, 60, 3000, false)
			p := New()
			for i := range recs {
				p.Add(&recs[i], true)
			}
			return p.Result(Options{Tiers: localTier(p, 10000)})
		}},
		{"ttft", func() *Result { return resultOf(run(t, 20000, 60, 3000, true), Options{}) }},
		{"mixed", func() *Result {
			recs := benchRecords(30000)
			p := New()
			for k := range recs {
				r := &recs[k]
				r.Stage = 1 + k/10000
				if r.Turn == 0 && k%3 != 0 {
					r.CachedTokens = record.Ptr(int64(64 + k%2*32)) // a shared system prompt
				}
				if k%50 == 0 {
					r.ErrorClass = record.ErrHTTP5xx
				}
				if k >= 20000 {
					r.RunID = "r2" // a second run: its conversations are its own
				}
				p.Add(r, k%7 != 0)
			}
			return p.Result(Options{Tiers: localTier(p, 20000)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(tc.res(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			clitest.Golden(t, filepath.Join("testdata", "result-"+tc.name+".golden.json"), append(got, '\n'))
		})
	}
}

// localTier returns scrape intervals of 50 requests each whose counters
// put the cached tokens of the requests at an LRU stack position (the
// middle of the previous context) up to localTokens in the local tier and
// the rest in the external one.
func localTier(p *Pass, localTokens float64) []TierInterval {
	shared := p.sharedPrefixes()
	pos := map[int32]float64{}
	for u := range distances(&p.reqs, int(p.nconv), shared) {
		pos[u.i] = float64(u.tokens) + float64(p.reqs.at(int(u.prev)).ctx)/2
	}
	var ivs []TierInterval
	for k := 0; k < p.reqs.len(); k += 50 {
		iv := TierInterval{Start: p.reqs.at(k).start - 1, End: p.reqs.at(min(k+50, p.reqs.len()) - 1).end}
		for i := k; i < min(k+50, p.reqs.len()); i++ {
			c := float64(max(0, p.reqs.at(i).cached))
			if pos[int32(i)] <= localTokens {
				iv.Local += c
			} else {
				iv.External += c
			}
		}
		ivs = append(ivs, iv)
	}
	return ivs
}
