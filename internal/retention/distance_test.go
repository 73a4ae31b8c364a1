package retention

import (
	stdcmp "cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rq is a request of a distance test: conversation, times, sizes.
type rq struct {
	conv               int32
	start, end         int64
	prompt, ctx, cache int32
}

func reqsOf(rs []rq) ([]req, int) {
	out := make([]req, len(rs))
	nconv := 0
	for k, r := range rs {
		out[k] = req{start: r.start, end: r.end, conv: r.conv, prompt: r.prompt, ctx: r.ctx, cached: r.cache, ttft: -1, counted: true}
		nconv = max(nconv, int(r.conv)+1)
	}
	return out, nconv
}

// storeOf returns rs as a Pass stores them.
func storeOf(rs []req) *requests {
	var s requests
	for _, r := range rs {
		s.add(r)
	}
	return &s
}

// got is a reuse as the tests spell it: request index, distance in
// tokens and in conversations.
type got struct {
	i      int32
	tokens int64
	convs  int32
}

func TestDistances(t *testing.T) {
	t.Parallel()
	const A, B, C = 0, 1, 2
	for _, tc := range []struct {
		name   string
		reqs   []rq
		shared []int32 // nil: none
		want   []got
	}{
		{
			name: "interleaved",
			reqs: []rq{
				{A, 0, 10, 100, 150, -1},
				{B, 20, 30, 200, 260, -1},
				{A, 40, 50, 200, 300, -1}, // B's 260 since A ended at 10
				{B, 60, 70, 300, 380, -1}, // A's 300 since B ended at 30
			},
			want: []got{{2, 260, 1}, {3, 300, 1}},
		},
		{
			name: "latest context counted once",
			reqs: []rq{
				{A, 0, 10, 100, 150, -1},
				{B, 12, 20, 50, 100, -1},
				{B, 25, 30, 180, 250, -1},
				{A, 40, 50, 200, 300, -1}, // B twice since: once, at 250
			},
			want: []got{{2, 0, 0}, {3, 250, 1}}, // B came back with nothing touched since
		},
		{
			name: "touched before the previous end does not count",
			reqs: []rq{
				{B, 0, 5, 100, 500, -1},
				{A, 6, 10, 100, 150, -1},
				{A, 20, 30, 200, 300, -1}, // B ended at 5, before A's end at 10
			},
			want: []got{{2, 0, 0}},
		},
		{
			name: "in flight counts with its prompt, even when it started before",
			reqs: []rq{
				{C, 5, 200, 70, 90, -1}, // running across A's reuse
				{A, 0, 10, 100, 150, -1},
				{B, 15, 100, 80, 120, -1},
				{A, 40, 50, 200, 300, -1},
			},
			want: []got{{3, 150, 2}},
		},
		{
			name: "an end at the instant of the start counts",
			reqs: []rq{
				{A, 0, 10, 100, 150, -1},
				{B, 20, 40, 200, 260, -1},
				{A, 40, 50, 200, 300, -1},
			},
			want: []got{{2, 260, 1}},
		},
		{
			name: "shared prefix counted once",
			reqs: []rq{
				{A, 0, 10, 100, 150, 0},
				{B, 20, 30, 100, 160, 64},
				{C, 40, 50, 100, 170, 64},
				{A, 60, 65, 200, 300, 150}, // 96 + 106 + 64, not 160 + 170
				{B, 70, 80, 200, 320, 160}, // C 106, A 300, the prefix 64 (C touched it after 30)
			},
			shared: []int32{0, 64, 64},
			want:   []got{{3, 266, 2}, {4, 470, 2}},
		},
		{
			name: "shared prefix not touched since",
			reqs: []rq{
				{B, 0, 10, 100, 160, 64},
				{A, 20, 30, 100, 150, 0},
				{B, 40, 50, 200, 300, 150}, // A only
			},
			shared: []int32{0, 64},
			want:   []got{{2, 150, 1}},
		},
		{
			name: "shared prefix in flight",
			reqs: []rq{
				{A, 0, 10, 100, 150, 0},
				{B, 20, 90, 100, 160, 64}, // prompt 100 less 64 in flight, and the prefix
				{A, 40, 50, 200, 300, 150},
			},
			shared: []int32{0, 64},
			want:   []got{{2, 100, 1}},
		},
		{
			name: "overlapping turns of one conversation are not reuses",
			reqs: []rq{
				{A, 0, 50, 100, 150, -1},
				{A, 40, 60, 200, 300, -1},
			},
			want: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reqs, nconv := reqsOf(tc.reqs)
			shared := tc.shared
			if shared == nil {
				shared = make([]int32, nconv)
			}
			var out []got
			for u := range distances(storeOf(reqs), nconv, shared) {
				out = append(out, got{u.i, u.tokens, u.convs})
			}
			if diff := cmp.Diff(tc.want, out, cmp.AllowUnexported(got{})); diff != "" {
				t.Errorf("reuses (-want +got):\n%s", diff)
			}
		})
	}
}

// naive is the reuse distance by its definition, in O(n^2): for a later
// turn r of conversation c whose previous request ended at e, every other
// conversation in flight at r's start (with that prompt) or whose latest
// request ended in (e, start] (with that context), less its shared
// prefix, and the largest shared prefix once if any of them has one.
func naive(reqs []req, shared []int32) map[int32]got {
	out := map[int32]got{}
	var sharedTok int32
	for _, s := range shared {
		sharedTok = max(sharedTok, s)
	}
	for i := range reqs {
		r := &reqs[i]
		prev := -1
		for k := range reqs {
			if reqs[k].conv == r.conv && reqs[k].start < r.start && (prev < 0 || reqs[k].start > reqs[prev].start) {
				prev = k
			}
		}
		if prev < 0 || reqs[prev].end > r.start {
			continue
		}
		e, s := reqs[prev].end, r.start
		type state struct {
			w      int32
			t      int64
			flying bool
		}
		seen := map[int32]*state{}
		for k := range reqs {
			d := &reqs[k]
			if d.conv == r.conv {
				continue
			}
			st := seen[d.conv]
			if st == nil {
				st = &state{}
				seen[d.conv] = st
			}
			switch {
			case d.start < s && d.end > s:
				st.flying, st.w = true, d.prompt
			case !st.flying && d.end > e && d.end <= s && d.end > st.t:
				st.t, st.w = d.end, d.ctx
			}
		}
		g := got{i: int32(i)}
		anyShared := false
		for c, st := range seen {
			if !st.flying && st.t == 0 {
				continue
			}
			g.tokens += int64(max(0, st.w-shared[c]))
			g.convs++
			anyShared = anyShared || shared[c] > 0
		}
		if anyShared {
			g.tokens += int64(sharedTok)
		}
		out[int32(i)] = g
	}
	return out
}

// TestDistancesOracle checks the sweep against the definition on random
// runs: conversations whose turns follow each other, many in flight at
// once, some with a shared prefix.
func TestDistancesOracle(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		nconv := 2 + rng.IntN(12)
		shared := make([]int32, nconv)
		var reqs []req
		used := map[int64]bool{}
		distinct := func(t int64) int64 {
			for used[t] {
				t++
			}
			used[t] = true
			return t
		}
		for c := range nconv {
			if rng.IntN(3) == 0 {
				shared[c] = 16 * int32(1+rng.IntN(4))
			}
			t, ctx := int64(rng.IntN(100)), int32(0)
			for range 1 + rng.IntN(6) {
				start := distinct(t + int64(rng.IntN(200)))
				end := distinct(start + 1 + int64(rng.IntN(80)))
				prompt := ctx + int32(10+rng.IntN(100))
				ctx = prompt + int32(rng.IntN(60))
				reqs = append(reqs, req{start: start, end: end, conv: int32(c), prompt: prompt, ctx: ctx, ttft: -1})
				t = end
			}
		}
		// Shuffled (the radix sort's path) or in order of start (no sort).
		rng.Shuffle(len(reqs), func(a, b int) { reqs[a], reqs[b] = reqs[b], reqs[a] })
		if seed%2 == 0 {
			slices.SortStableFunc(reqs, func(a, b req) int { return stdcmp.Compare(a.start, b.start) })
		}
		want := naive(reqs, shared)
		gotN := 0
		for u := range distances(storeOf(reqs), nconv, shared) {
			gotN++
			w, ok := want[u.i]
			if !ok || w.tokens != u.tokens || w.convs != u.convs {
				t.Errorf("seed %d: request %d: tokens %d convs %d, want %+v (present %v)", seed, u.i, u.tokens, u.convs, w, ok)
			}
		}
		if gotN != len(want) {
			t.Errorf("seed %d: %d reuses, want %d", seed, gotN, len(want))
		}
	}
}

// TestRequests checks the chunked store: every request where it was
// added, across chunks.
func TestRequests(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, chunkLen - 1, chunkLen, chunkLen + 1, 2*chunkLen + 5} {
		var s requests
		for i := range n {
			s.add(req{start: int64(i)})
		}
		if s.len() != n {
			t.Fatalf("%d requests: len %d", n, s.len())
		}
		for i := range n {
			if got := s.at(i).start; got != int64(i) {
				t.Fatalf("%d requests: request %d holds %d", n, i, got)
			}
		}
		for k, c := range s.chunks[:max(0, len(s.chunks)-1)] {
			if len(c) != chunkLen {
				t.Errorf("%d requests: chunk %d holds %d, want %d", n, k, len(c), chunkLen)
			}
		}
	}
}

// TestOrder checks order against a stable comparison sort: by key, ties
// by index, keys spanning several radix passes; in random order (all
// sorted by radix) and nearly in order (the out-of-order ones sorted and
// merged), with ties between the two.
func TestOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	for _, span := range []int64{1, 5, 3000, 1 << 40, 1 << 62} {
		for _, moved := range []float64{1, 0, 0.001, 0.05, 0.2, 0.3} {
			reqs := make([]req, 5000)
			for i := range reqs {
				if moved == 1 {
					reqs[i].start = 1e18 + rng.Int64N(span)
				} else {
					reqs[i].start = 1e18 + int64(float64(i)/float64(len(reqs))*float64(span))
				}
			}
			for i := range reqs {
				if moved < 1 && rng.Float64() < moved {
					reqs[i].start = 1e18 + rng.Int64N(span) // too early, or too late
				}
			}
			got := order(storeOf(reqs), func(r *req) int64 { return r.start })
			want := make([]int32, len(reqs))
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int { return stdcmp.Compare(reqs[a].start, reqs[b].start) })
			if !slices.Equal(got, want) {
				t.Errorf("span %d, moved %v: order differs from the stable sort", span, moved)
			}
		}
	}
}
