package sweep

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// cacheModel is a server with an LRU prefix cache of local tokens, and
// optionally an offload tier of offload tokens behind it, serving
// conversations of ctx tokens each from clients closed-loop clients in
// rotation. With round-robin rotation LRU keeps all of the working set
// (level × ctx) while it fits and none of it beyond: every later turn
// misses. With smooth, the hit share falls as capacity / working set
// instead (random sampling's gradual loss). A hit costs base, a miss
// base + prefill × ctx; reportCached false hides the cached tokens.
type cacheModel struct {
	clients        int
	ctx            float64
	local, offload float64
	base, prefill  time.Duration // prefill per token
	smooth         bool
	hideCached     bool
}

func (m cacheModel) share(ws, capacity float64) float64 {
	switch {
	case ws <= capacity:
		return 1
	case m.smooth:
		return capacity / ws
	}
	return 0
}

func (m cacheModel) run(s Stage) Result {
	ws := s.Level * m.ctx
	total := m.share(ws, m.local+m.offload)
	local := m.share(ws, m.local)
	ttft := m.base + time.Duration((1-total)*m.ctx*float64(m.prefill))
	x := float64(m.clients) / ttft.Seconds()
	r := Result{Stage: s, Throughput: x, FirstHalf: x, SecondHalf: x, MeetsSLO: true,
		Retention: Retention{LaterTurns: 100, WorkingSetTokens: ws, HitShare: total, TTFTP50: ttft}}
	if m.offload > 0 {
		r.Retention.Tiered = true
		r.Retention.LocalHitTokens = 100 * local * m.ctx
		r.Retention.ExternalHitTokens = 100 * (total - local) * m.ctx
	}
	if m.hideCached {
		r.Retention.HitShare = math.NaN()
	}
	return r
}

// TestActiveSweep runs active sweeps against cache models and checks that
// the knee's working set is the cache's size and the capacity the most
// conversations that fit, on either basis.
func TestActiveSweep(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	for _, tc := range []struct {
		name      string
		m         cacheModel
		start     float64
		wantKnee  float64 // working set, tokens
		within    float64
		basis     Basis
		capacity  float64 // conversations: exact with a cliff, 0 to skip
		wantTiers bool
	}{
		{"cliff at 40000 tokens", cacheModel{clients: 4, ctx: 1000, local: 40000, base: 20 * ms, prefill: 50 * time.Microsecond}, 0, 40000, 0.1, BasisCached, 40, false},
		{"cliff at 150000 tokens", cacheModel{clients: 8, ctx: 2500, local: 150000, base: 20 * ms, prefill: 50 * time.Microsecond}, 0, 150000, 0.1, BasisCached, 60, false},
		{"two tiers, 30000 + 120000", cacheModel{clients: 4, ctx: 1000, local: 30000, offload: 120000, base: 20 * ms, prefill: 50 * time.Microsecond}, 0, 150000, 0.1, BasisCached, 150, true},
		{"no cached tokens: the TTFT step", cacheModel{clients: 4, ctx: 1000, local: 40000, base: 20 * ms, prefill: 50 * time.Microsecond, hideCached: true}, 0, 40000, 0.1, BasisTTFT, 40, false},
		{"smooth loss", cacheModel{clients: 4, ctx: 1000, local: 40000, base: 20 * ms, prefill: 50 * time.Microsecond, smooth: true}, 8, 80000, 0.1, BasisCached, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Planner{Kind: Active, Clients: tc.m.clients, Start: tc.start, Duration: 30 * time.Second, Warmup: 5 * time.Second}
			done := sweep(t, p, tc.m.run)
			capa := Criteria{}.Judge(Active, nil, done)
			if capa.KneeWorkingSetTokens == nil || capa.Knee == nil {
				t.Fatalf("no knee: %s (stages %+v)", capa.Line(), done)
			}
			if got := *capa.KneeWorkingSetTokens; math.Abs(got-tc.wantKnee) > tc.within*tc.wantKnee {
				t.Errorf("knee working set %g, want %g within %.0f%%: %s", got, tc.wantKnee, 100*tc.within, capa.Line())
			}
			if capa.Basis != tc.basis {
				t.Errorf("basis %s, want %s", capa.Basis, tc.basis)
			}
			// Bisection stops within the planner's tolerance (10 %).
			if tc.capacity > 0 && (capa.Capacity > tc.capacity || capa.Capacity < 0.9*tc.capacity ||
				capa.Failed == nil || *capa.Failed <= tc.capacity || *capa.Failed > 1.1*capa.Capacity+1) {
				t.Errorf("capacity %g (failed %v), want %g within 10%%, bracketed: %s", capa.Capacity, capa.Failed, tc.capacity, capa.Line())
			}
			for _, r := range done {
				if r.Stage.Level < float64(tc.m.clients) || r.Stage.Kind != Active {
					t.Errorf("stage %v below the %d clients", r.Stage, tc.m.clients)
				}
			}
			tiers := capa.Stages[len(capa.Stages)-1].LocalHitTokens != nil
			if tiers != tc.wantTiers {
				t.Errorf("tier split reported %v, want %v", tiers, tc.wantTiers)
			}
		})
	}
}

// TestActiveTiming: the first stage takes the planner's duration; later
// ones last a warmup of one round (level / throughput) and Returns rounds
// after it, never less than the planner's.
func TestActiveTiming(t *testing.T) {
	t.Parallel()
	p := Planner{Kind: Active, Clients: 2, Duration: 20 * time.Second, Warmup: 2 * time.Second}.withDefaults()
	d, w := p.activeTiming(64, nil)
	if d != 20*time.Second || w != 2*time.Second {
		t.Errorf("first stage %v/%v, want the planner's 20s/2s", d, w)
	}
	done := []Result{{Stage: Stage{Kind: Active, Level: 32}, Throughput: 10, Retention: Retention{LaterTurns: 50, HitShare: 1}}}
	if d, w = p.activeTiming(64, done); w != 6400*time.Millisecond || d != 32*time.Second {
		t.Errorf("64 conversations at 10 requests/s: %v/%v, want 32s with a 6.4s warmup", d, w)
	}
	if d, w = p.activeTiming(4, done); w != 2*time.Second || d != 20*time.Second {
		t.Errorf("4 conversations at 10 requests/s: %v/%v, want the planner's 20s/2s", d, w)
	}
	s, ok := p.Next(done)
	if !ok || s.Level != 64 || s.Duration != 32*time.Second || s.Warmup != 6400*time.Millisecond {
		t.Errorf("next stage %v %v", s, ok)
	}
	if _, err := ParseStages(s.String()); err != nil {
		t.Errorf("stage %v does not parse back: %v", s, err)
	}
}

// TestActiveSweepEnds: a sweep stops at Max, is not ended by lateness,
// and goes down (not below the clients) when even the first level
// was not retained.
func TestActiveSweepEnds(t *testing.T) {
	t.Parallel()
	m := cacheModel{clients: 4, ctx: 1000, local: 40000, base: 20 * time.Millisecond, prefill: 50 * time.Microsecond}
	done := sweep(t, Planner{Kind: Active, Clients: 4, Max: 20}, m.run)
	if last := done[len(done)-1].Stage.Level; len(done) != 4 || last != 20 {
		t.Errorf("capped sweep: %d stages ending at %g, want 4, 8, 16, 20", len(done), last)
	}
	if c := (Criteria{}).Judge(Active, nil, done); c.Failed != nil || !strings.Contains(c.Line(), "lower bound") {
		t.Errorf("capped sweep: %s", c.Line())
	}
	small := cacheModel{clients: 4, ctx: 1000, local: 5000, base: 20 * time.Millisecond, prefill: 50 * time.Microsecond}
	done = sweep(t, Planner{Kind: Active, Clients: 4, Start: 16}, small.run)
	c := Criteria{}.Judge(Active, nil, done)
	if c.Capacity != 5 || c.Failed == nil || *c.Failed != 6 {
		t.Errorf("small cache: %s (stages %v)", c.Line(), done)
	}
	// Lateness is the design of an active stage (a ready turn waits
	// while its client serves the other conversations): it does not end
	// the sweep.
	late := func(s Stage) Result {
		r := m.run(s)
		r.LatenessP99 = time.Duration(s.Level) * time.Second
		return r
	}
	if done = sweep(t, Planner{Kind: Active, Clients: 4}, late); len(done) < 5 || (Criteria{}).Judge(Active, nil, done).ClientLimited {
		t.Errorf("late active stages: %d stages, judged client-limited; want the sweep to go on", len(done))
	}
}

// TestActiveCapacityJSON: the capacity JSON of an active sweep carries
// the basis, the knee's working set and each stage's retention.
func TestActiveCapacityJSON(t *testing.T) {
	t.Parallel()
	m := cacheModel{clients: 2, ctx: 1000, local: 3000, offload: 3000, base: 10 * time.Millisecond, prefill: 10 * time.Microsecond}
	var done []Result
	for _, level := range []float64{2, 4, 8} {
		done = append(done, m.run(Stage{Kind: Active, Level: level}))
	}
	c := Criteria{}.Judge(Active, nil, done)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Basis  string   `json:"basis"`
		Knee   *float64 `json:"knee"`
		KneeWS *float64 `json:"knee_working_set_tokens"`
		Stages []map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Basis != "cached_tokens" || got.Knee == nil || *got.Knee != 6 || *got.KneeWS != 6000 {
		t.Errorf("capacity JSON %s", b)
	}
	st := got.Stages[1]
	for k, want := range map[string]float64{"working_set_tokens": 4000, "hit_share": 1, "ttft_p50_ms": 10, "later_turns": 100,
		"local_hit_tokens": 0, "external_hit_tokens": 100 * 1000} {
		if st[k] != want {
			t.Errorf("stage 2 %s = %v, want %v (%s)", k, st[k], want, b)
		}
	}
	want := "working set retained up to 4 active conversations (4000 tokens), not at 8 (8000 tokens); knee at 6 conversations, 6000 tokens (basis cached_tokens)"
	if c.Line() != want {
		t.Errorf("Line() = %q\nwant     %q", c.Line(), want)
	}
	tok, conv := 6100.4, 6.2
	c.Retention = &RetentionCapacity{Basis: BasisCached, CapacityTokens: &tok, CapacityConversations: &conv}
	if want += "; effective capacity by reuse distance 6100 tokens, 6.2 conversations (basis cached_tokens)"; c.Line() != want {
		t.Errorf("Line() = %q\nwant     %q", c.Line(), want)
	}
}
