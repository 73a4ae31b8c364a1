package retention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

func TestCapacity(t *testing.T) {
	t.Parallel()
	step := func(at float64, n int, noise func(k int) float64) []point {
		var pts []point
		for k := range n {
			x := float64(k) * 10
			s := 1.0
			if x > at {
				s = 0
			}
			pts = append(pts, point{x, clamp01(s + noise(k))})
		}
		return pts
	}
	none := func(int) float64 { return 0 }
	for _, tc := range []struct {
		name string
		pts  []point
		want float64 // NaN: no step
		tol  float64
	}{
		{"clean step", step(5000, 1000, none), 5005, 0.1},
		{"no points", nil, math.NaN(), 0},
		{"all cached", step(1e9, 100, none), math.NaN(), 0},
		{"nothing cached", step(-1, 100, none), math.NaN(), 0},
		{"one violator each side", append(step(5000, 1000, none), point{200, 0}, point{9000, 1}), 5005, 20},
		{"partial shares", step(5000, 1000, func(k int) float64 { return -0.3 * float64(k%2) }), 5005, 0.1},
		{"noisy", step(3000, 1000, func(k int) float64 {
			if k%7 == 0 {
				return 0.4 - 0.8*float64(k%2)
			}
			return 0
		}), 3005, 30},
		{"gap between hits and misses", []point{{100, 1}, {200, 1}, {900, 0}, {1000, 0}}, 550, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := capacity(tc.pts)
			if math.IsNaN(tc.want) {
				if ok {
					t.Errorf("capacity %v, want no step", got)
				}
				return
			}
			if !ok || math.Abs(got-tc.want) > tc.tol {
				t.Errorf("capacity %v (ok %v), want %v ± %v", got, ok, tc.want, tc.tol)
			}
		})
	}
}

func TestNiceCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q99   float64
		width float64
		n     int

		integer bool
	}{
		{0, 1, 1, true},
		{19, 1, 20, true},
		{100000, 5000, 21, true},
		{150000, 8000, 19, true},
		{7.3, 0.4, 19, false},
		{7.3, 1, 8, true},
	} {
		g, n := cut(tc.q99, targetBuckets, tc.integer)
		if w := g.edge(1); math.Abs(w-tc.width) > 1e-9 || n != tc.n {
			t.Errorf("cut(%v) = %v, %d; want %v, %d", tc.q99, g.edge(1), n, tc.width, tc.n)
		}
	}
}

// run builds the records of a synthetic run against an LRU of capTokens
// tokens, counted in whole contexts: nconv active conversations served in
// a random order, one request at a time; a conversation ends after 8
// turns and a new one takes its place. Each turn adds 50 to 450 prompt
// tokens and 50 completion tokens. A later turn finds its previous context
// cached when the contexts touched since plus its own fit, and its TTFT
// is 20 ms + 0.05 ms per uncached token.
func run(t *testing.T, capTokens, nconv, requests int, hide bool) []record.Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	type state struct {
		id        string
		ctx, turn int
	}
	convs := make([]state, nconv)
	ids := 0
	for c := range convs {
		convs[c].id = fmt.Sprint("c", ids)
		ids++
	}
	ctxOf := map[string]int{}
	var recs []record.Record
	var lru []string // conversations, most recent last
	t0 := time.Unix(1e9, 0)
	for k := range requests {
		st := &convs[rng.IntN(nconv)]
		prompt := st.ctx + 50 + rng.IntN(400)
		cached := 0
		if st.turn > 0 {
			above := 0
			for i := len(lru) - 1; i >= 0 && lru[i] != st.id; i-- {
				above += ctxOf[lru[i]]
			}
			if above+st.ctx <= capTokens {
				cached = st.ctx
			}
		}
		ttft := 20*time.Millisecond + time.Duration(prompt-cached)*50*time.Microsecond
		start := t0.Add(time.Duration(k) * time.Second)
		r := record.Record{RunID: "r", Seq: int64(k), ConversationID: st.id, Turn: st.turn,
			Phase: record.PhaseMeasure, Start: start, End: start.Add(ttft + time.Millisecond), TTFTNs: record.Ptr(int64(ttft)),
			PromptTokens: record.Ptr(int64(prompt)), CompletionTokens: record.Ptr(int64(50))}
		if !hide {
			r.CachedTokens = record.Ptr(int64(cached))
		}
		recs = append(recs, r)
		st.ctx = prompt + 50
		st.turn++
		ctxOf[st.id] = st.ctx
		lru = slices.DeleteFunc(lru, func(id string) bool { return id == st.id })
		lru = append(lru, st.id)
		if st.turn == 8 {
			*st = state{id: fmt.Sprint("c", ids)}
			ids++
		}
	}
	return recs
}

func resultOf(recs []record.Record, o Options) *Result {
	p := New()
	for i := range recs {
		p.Add(&recs[i], true)
	}
	return p.Result(o)
}

func TestResultBases(t *testing.T) {
	t.Parallel()
	const capTokens = 20000
	for _, tc := range []struct {
		name  string
		hide  bool
		basis string
	}{
		{"cached_tokens", false, BasisCachedTokens},
		{"ttft", true, BasisTTFT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := resultOf(run(t, capTokens, 60, 3000, tc.hide), Options{})
			if res.Basis != tc.basis {
				t.Fatalf("basis %q, want %q (note %q)", res.Basis, tc.basis, res.Note)
			}
			if res.CapacityTokens == nil || math.Abs(*res.CapacityTokens-capTokens)/capTokens > 0.05 {
				t.Errorf("capacity_tokens %v, want %d ± 5%%", fmtp(res.CapacityTokens), capTokens)
			}
			if res.CapacityConversations == nil {
				t.Errorf("capacity_conversations null")
			}
			if len(res.Profile) < 5 || len(res.ProfileSeconds) == 0 {
				t.Fatalf("%d token buckets, %d seconds buckets", len(res.Profile), len(res.ProfileSeconds))
			}
			first, last := res.Profile[0], res.Profile[len(res.Profile)-1]
			if *first.CachedShare < 0.9 || *last.CachedShare > 0.1 {
				t.Errorf("cached share %v at the nearest distances, %v at the farthest", *first.CachedShare, *last.CachedShare)
			}
			n := 0
			for _, b := range res.Profile {
				n += b.Requests
				if (b.TTFTPerUncachedTokenMs == nil) != tc.hide {
					t.Errorf("bucket %d: ttft_per_uncached_token_ms %v on the %s basis", b.Lo, fmtp(b.TTFTPerUncachedTokenMs), tc.basis)
				}
			}
			if n != res.Requests {
				t.Errorf("buckets hold %d requests, want %d", n, res.Requests)
			}
			if tc.hide && (res.Fit == nil || math.Abs(res.Fit.PerTokenMs-0.05) > 0.005 || math.Abs(res.Fit.BaseMs-20) > 1) {
				t.Errorf("fit %+v, want base 20 ms, 0.05 ms per token", res.Fit)
			}
		})
	}
}

func fmtp(x *float64) any {
	if x == nil {
		return "null"
	}
	return *x
}

func TestFitRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		prompts []int
	}{
		{"too few first turns", []int{100, 200, 300, 400, 500}},
		{"all alike", []int{100, 100, 101, 100, 102, 100, 101, 100, 100, 101}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := New()
			for k, n := range tc.prompts {
				r := record.Record{ConversationID: string(rune('a' + k)), PromptTokens: record.Ptr(int64(n)),
					TTFTNs: record.Ptr(int64(20e6 + 50e3*n))}
				p.Add(&r, true)
			}
			if f := p.fitTTFT(); f != nil {
				t.Errorf("fit %+v, want none", f)
			}
		})
	}
}

// TestTiers splits the hits of a synthetic two-tier run: the nearest
// reuses are local, the farther ones external.
func TestTiers(t *testing.T) {
	t.Parallel()
	recs := run(t, 30000, 60, 3000, false)
	// A local tier of 10,000 tokens: hits at a stack position below it
	// are local, the rest external. The interval counters add them up.
	p := New()
	for i := range recs {
		p.Add(&recs[i], true)
	}
	shared := p.sharedPrefixes()
	reuses := distances(&p.reqs, int(p.nconv), shared)
	pos := map[int32]float64{}
	for u := range reuses {
		pos[u.i] = float64(u.tokens) + float64(p.reqs.at(int(u.prev)).ctx)/2
	}
	var ivs []TierInterval
	for k := 0; k < p.reqs.len(); k += 50 {
		iv := TierInterval{Start: p.reqs.at(k).start - 1, End: p.reqs.at(min(k+50, p.reqs.len()) - 1).end}
		for i := k; i < min(k+50, p.reqs.len()); i++ {
			c := float64(p.reqs.at(i).cached)
			if pos[int32(i)] <= 10000 {
				iv.Local += c
			} else {
				iv.External += c
			}
		}
		ivs = append(ivs, iv)
	}
	res := p.Result(Options{Tiers: ivs})
	if res.Tiers == nil {
		t.Fatal("no tiers")
	}
	for _, c := range []struct {
		name string
		got  *float64
		want float64
	}{
		{"local", res.Tiers.LocalCapacityTokens, 10000},
		{"total", res.Tiers.TotalCapacityTokens, 30000},
	} {
		if c.got == nil || math.Abs(*c.got-c.want)/c.want > 0.1 {
			t.Errorf("%s capacity %v, want %v ± 10%%", c.name, fmtp(c.got), c.want)
		}
	}
	near, far := res.Profile[0], res.Profile[len(res.Profile)/2]
	if near.LocalShare == nil || *near.LocalShare < 0.9 {
		t.Errorf("nearest bucket: local share %v", fmtp(near.LocalShare))
	}
	if far.ExternalShare == nil || far.LocalShare == nil || *far.ExternalShare < *far.LocalShare {
		t.Errorf("bucket %d..%d: local %v external %v", far.Lo, far.Hi, fmtp(far.LocalShare), fmtp(far.ExternalShare))
	}
}

// TestAddIgnores checks which records touch nothing: failed attempts and
// choices past the first.
func TestAddIgnores(t *testing.T) {
	t.Parallel()
	p := New()
	p.Add(&record.Record{ConversationID: "a", ErrorClass: record.ErrHTTP5xx}, true)
	p.Add(&record.Record{ConversationID: "a", Choice: 1}, true)
	p.Add(&record.Record{ConversationID: "a"}, false)
	if p.Len() != 1 {
		t.Errorf("%d requests kept, want 1", p.Len())
	}
}

// TestEdgesPrintRound: bucket edges are the decimals they stand for
// (0.15 × 8 is 1.2, not 1.2000000000000002).
func TestEdgesPrintRound(t *testing.T) {
	t.Parallel()
	for _, q := range []float64{0.003, 0.07, 2.9, 7.3, 31, 430, 99999} {
		g, n := cut(q, targetBuckets, false)
		for b := range n + 1 {
			s := strconv.FormatFloat(g.edge(b), 'g', -1, 64)
			if len(s) > 12 {
				t.Errorf("q99 %v: edge %d is %s", q, b, s)
			}
		}
	}
}

// TestConversationNumbers checks that Add's segments, merged by number,
// number conversations as a map of every (run, id) does: by first appearance
// of (run, conversation id), whatever the clients do (several sessions
// per client, conversations that change clients, ids repeated across runs
// that come back, negative and huge client numbers).
func TestConversationNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hash func(string) uint64 // nil: New's
	}{
		{"maphash", nil},
		{"colliding", func(s string) uint64 { return uint64(len(s)) }}, // c0 … c9 share one hash, c10 … c39 another
		{"one hash", func(string) uint64 { return 7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, 8))
			clients := []int{-1, 0, 1, 2, 3, maxClientCache - 1, maxClientCache, 1 << 30}
			p := New()
			if tc.hash != nil {
				p.hash = tc.hash
			}
			type key struct{ run, conv string }
			want := map[key]int32{}
			var wantSeq []int32
			for k := range 5000 {
				run := fmt.Sprint("run", k/700%3) // runs 0, 1, 2, 0, 1, 2, 0, 1
				r := record.Record{RunID: run, ConversationID: fmt.Sprint("c", rng.IntN(40)), Client: clients[rng.IntN(len(clients))]}
				kk := key{run, r.ConversationID}
				if _, ok := want[kk]; !ok {
					want[kk] = int32(len(want))
				}
				wantSeq = append(wantSeq, want[kk])
				p.Add(&r, true)
				if k == 2500 {
					p.number() // numbers kept by later calls
				}
			}
			p.number()
			for k := range p.reqs.len() {
				if p.reqs.at(k).conv != wantSeq[k] {
					t.Fatalf("request %d: conversation %d, want %d", k, p.reqs.at(k).conv, wantSeq[k])
				}
			}
			if int(p.nconv) != len(want) {
				t.Errorf("%d conversations, want %d", p.nconv, len(want))
			}
		})
	}
}
