package mtstats

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// oracleQuantile is the p-quantile of xs by the textbook definition
// (pandas' default): sort the float64s, interpolate between the order
// statistics around (n−1)p.
func oracleQuantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	h := float64(len(s)-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

func oracleMean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// oracleSamples are the TTFT, ITL and latency samples (ms) of the
// measured, successful, final attempts of recs, all and by turn.
func oracleSamples(recs []record.Record) (all map[string][]float64, byTurn map[int]map[string][]float64) {
	all, byTurn = map[string][]float64{}, map[int]map[string][]float64{}
	for _, r := range recs {
		if r.Phase == record.PhaseWarmup || r.Retried || r.ErrorClass != "" {
			continue
		}
		if byTurn[r.Turn] == nil {
			byTurn[r.Turn] = map[string][]float64{}
		}
		for _, m := range []map[string][]float64{all, byTurn[r.Turn]} {
			if r.TTFTNs != nil {
				m["ttft_ms"] = append(m["ttft_ms"], float64(*r.TTFTNs)/1e6)
			}
			for _, g := range r.ITLNs {
				m["itl_ms"] = append(m["itl_ms"], float64(g)/1e6)
			}
			m["latency_ms"] = append(m["latency_ms"], float64(r.LatencyNs)/1e6)
		}
	}
	return all, byTurn
}

// TestAgainstOracle: the summary and the --by turn table (both detail
// levels), from JSONL and Parquet, give the quantiles and means of a
// straightforward computation (float64 ms samples, sorted, interpolated)
// to 1e-9 relative, on records with ITL gaps, failures, retries and a
// warmup phase, enough of them for the radix paths.
func TestAgainstOracle(t *testing.T) {
	t.Parallel()
	recs := statstest.Records(statstest.Config{Seed: 77, Run: "o", Convs: 400, MaxTurns: 6, Warmup: 20, FailEvery: 29, ITL: true})
	all, byTurn := oracleSamples(recs)
	if len(all["itl_ms"]) < 10000 || len(all["ttft_ms"]) < stats.RadixMin {
		t.Fatalf("too few samples: %d ITL gaps, %d TTFTs", len(all["itl_ms"]), len(all["ttft_ms"]))
	}
	dir := t.TempDir()
	check := func(what string, got map[string]any, want map[string][]float64, stats []string) {
		t.Helper()
		for name, xs := range want {
			d := got[name].(map[string]any)
			if int(d["count"].(float64)) != len(xs) {
				t.Errorf("%s %s: count %v, want %d", what, name, d["count"], len(xs))
			}
			for _, st := range stats {
				if st == "p99.9" && len(xs) < 1000 || st == "p99.99" && len(xs) < 10000 {
					continue // not reported below that many samples
				}
				var w float64
				switch st {
				case "mean":
					w = oracleMean(xs)
				case "std":
					m, ss := oracleMean(xs), 0.0
					for _, x := range xs {
						ss += (x - m) * (x - m)
					}
					w = math.Sqrt(ss / float64(len(xs)-1))
				case "min":
					w = oracleQuantile(xs, 0)
				case "max":
					w = oracleQuantile(xs, 1)
				default:
					p, _ := strconv.ParseFloat(st[1:], 64)
					for p >= 1 {
						p /= 10
					}
					w = oracleQuantile(xs, p)
				}
				if g, ok := d[st].(float64); !ok || !closeRel(g, w, 1e-9) {
					t.Errorf("%s %s %s: %v, want %v", what, name, st, d[st], w)
				}
			}
		}
	}
	full := []string{"mean", "std", "min", "p25", "p50", "p75", "p90", "p99", "p99.9", "p99.99", "max"}
	for name, data := range map[string][]byte{"o.jsonl": statstest.JSONL(t, recs), "o.parquet": statstest.Parquet(t, recs)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, detail := range []string{report.ByTable, report.ByFull} {
			rep, _ := runJSON(t, Options{Inputs: []string{path}, By: "turn", ByDetail: detail})
			check(name+" summary", rep["summary"].(map[string]any)["metrics"].(map[string]any), all, full)
			groups := rep["groups"].([]any)
			if len(groups) != len(byTurn) {
				t.Fatalf("%s: %d turn groups, want %d", name, len(groups), len(byTurn))
			}
			for _, g := range groups {
				g := g.(map[string]any)
				turn, _ := strconv.Atoi(g["key"].(string))
				want := byTurn[turn]
				if want["itl_ms"] == nil {
					delete(want, "itl_ms")
				}
				check(name+" "+detail+" turn "+g["key"].(string), g["metrics"].(map[string]any), want, []string{"mean", "std", "min", "p50", "p90", "p99", "max"})
			}
		}
	}
}

// closeRel reports whether a and b agree to rel (both NaN agree).
func closeRel(a, b, rel float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b)) || a == b
}
