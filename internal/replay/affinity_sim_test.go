package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtkit/mtkit/internal/mtstats"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/stats"
)

// TestAffinityReport: the simulator's router breaks affinity on a known
// share of the requests that carry its session token; mtrun captures and
// sends back the token and records the backend header; mtstats reports as
// moved exactly the turns the router moved, and shows their prefix cache
// missing where the turns that stayed hit.
func TestAffinityReport(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{Replicas: 4, AffinityBreak: 0.25, Seed: 9, CacheTokens: 1 << 20, DefaultMaxTokens: 8})
	o := Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 4},
		SessionTokens: []string{sim.SessionTokenHeader}, BackendHeader: sim.BackendHeader}
	res := replayT(t, o, simpleConvs(40, 6))
	path := filepath.Join(t.TempDir(), "records.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := record.NewJSONEncoder(f)
	for _, r := range res.recs {
		if r.ErrorClass != "" || r.Backend == "" {
			t.Fatalf("record %d: error %q, backend %q", r.Seq, r.ErrorClass, r.Backend)
		}
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := mtstats.Run(context.Background(), mtstats.Options{Inputs: []string{path}, Format: "json", Out: &out, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var rep struct{ Affinity *stats.Affinity }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	a, st := rep.Affinity, srv.Router.Stats()
	if a == nil {
		t.Fatal("no affinity section")
	}
	// The first request of a session has no token yet: the router sees a
	// session on the 5 later turns of each of the 40 conversations.
	if st.SessionRequests != 40*5 || a.Turns != 40*5 || a.Conversations != 40 || a.Backends != 4 {
		t.Errorf("router %+v, report %+v", st, a)
	}
	if uint64(a.Moved) != st.Moved || math.Abs(float64(a.MovedShare)-0.25) > 0.1 {
		t.Errorf("mtstats moved %d (%.3f), the router moved %d of %d", a.Moved, float64(a.MovedShare), st.Moved, st.SessionRequests)
	}
	if !(a.MovedTurns.CacheHitRate < a.Stayed.CacheHitRate/2) {
		t.Errorf("cache hit of moved turns %.3f, of turns that stayed %.3f: moving should lose the prefix", float64(a.MovedTurns.CacheHitRate), float64(a.Stayed.CacheHitRate))
	}
}
