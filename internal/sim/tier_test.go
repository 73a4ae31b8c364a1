package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/metrics"
)

// TestTieredCache drives the two-tier cache through sequences of inserts
// and lookups and checks the exact hits per tier and the blocks each tier
// holds after every step.
func TestTieredCache(t *testing.T) {
	t.Parallel()
	chain := func(seed, blocks int) []uint64 {
		ids := make([]int, blocks*4)
		for i := range ids {
			ids[i] = seed*1000 + i
		}
		return blockHashes(ids, 4)
	}
	a, b, c := chain(1, 4), chain(2, 4), chain(3, 2)
	type step struct {
		insert []uint64 // inserted when match is nil
		match  []uint64
		local  int // expected hits of match, per tier
		ext    int
		blocks int // blocks held afterwards, per tier
		off    int
	}
	tests := []struct {
		name       string
		local, off int // capacities in blocks
		steps      []step
	}{
		{"no offload tier: evicted blocks are gone", 4, 0, []step{
			{insert: a, blocks: 4},
			{match: a, local: 4, blocks: 4},
			{insert: c, blocks: 4}, // a's tail (2 blocks) evicted
			{match: a, local: 2, blocks: 4},
			{insert: b, blocks: 4},
			{match: a, blocks: 4},
		}},
		{"evicted blocks move to the offload tier and come back", 4, 4, []step{
			{insert: a, blocks: 4},
			{insert: b, blocks: 4, off: 4},        // all of a offloaded
			{match: a, ext: 4, blocks: 4, off: 4}, // a loaded back, b offloaded
			{match: a, local: 4, blocks: 4, off: 4},
			{match: b, ext: 4, blocks: 4, off: 4},
		}},
		{"a chain split across the tiers: local head, offloaded tail", 4, 4, []step{
			{insert: a, blocks: 4},
			{insert: c, blocks: 4, off: 2},                  // a's tail offloaded
			{match: a, local: 2, ext: 2, blocks: 4, off: 2}, // c offloaded in turn
			{match: c, ext: 2, blocks: 4, off: 2},
		}},
		{"the offload tier drops its least recent blocks, the tail first", 4, 2, []step{
			{insert: a, blocks: 4},
			{insert: b, blocks: 4, off: 2}, // a3, a2 dropped; a1, a0 kept
			{match: a, ext: 2, blocks: 4, off: 2},
			{match: a[:2], local: 2, blocks: 4, off: 2},
		}},
		{"a lookup stops at the first block in neither tier", 4, 8, []step{
			{insert: a, blocks: 4},
			{insert: b, blocks: 4, off: 4},
			{match: append(a[:2:2], c...), ext: 2, blocks: 4, off: 4},
		}},
		{"a chain longer than the local tier keeps its head", 2, 4, []step{
			{insert: a, blocks: 2},
			{match: a, local: 2, blocks: 2},
			{insert: b, blocks: 2, off: 2},
			{match: a, ext: 2, blocks: 2, off: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pc := newPrefixCache(tt.local, tt.off)
			for i, st := range tt.steps {
				if st.match != nil {
					if l, e := pc.match(st.match); l != st.local || e != st.ext {
						t.Fatalf("step %d: match hit %d local + %d offloaded blocks, want %d + %d", i, l, e, st.local, st.ext)
					}
				} else {
					pc.insert(st.insert)
				}
				if sz := pc.size(); sz.blocks != st.blocks || sz.offloadBlocks != st.off {
					t.Fatalf("step %d: tiers hold %d + %d blocks, want %d + %d", i, sz.blocks, sz.offloadBlocks, st.blocks, st.off)
				}
			}
			// The tiers are exclusive: no block is held twice.
			for h := range pc.local.blocks {
				if _, ok := pc.offload.blocks[h]; ok {
					t.Fatalf("block %x in both tiers", h)
				}
			}
		})
	}
}

// TestOffloadServer checks a server with an offload tier end to end, on a
// virtual clock: a short conversation A is pushed out of the local tier by
// a long one B and comes back from the offload tier. Its cached_tokens
// count both tiers, /metrics splits them as vLLM does, and its first token
// comes at ttft + prefill × computed + offload-load × loaded tokens.
func TestOffloadServer(t *testing.T) {
	t.Parallel()
	const (
		bs      = 16
		ttft    = 10 * time.Millisecond
		prefill = 100 * time.Microsecond
		load    = 10 * time.Microsecond
	)
	s, ts := newTestServer(t, Config{CacheTokens: 256, OffloadTokens: 1024, BlockSize: bs,
		TTFTBase: ttft, PrefillPerToken: prefill, OffloadLoadPerToken: load, DecodePerToken: time.Millisecond})
	clk := &virtualClock{t: time.Unix(1000, 0)}
	s.clk = clk
	bodyA := with(chatBody(true, 4, strings.Repeat("cat ", 100)), "stream_options", map[string]any{"include_usage": true})
	bodyB := with(chatBody(true, 4, strings.Repeat("dog ", 400)), "stream_options", map[string]any{"include_usage": true})
	type turn struct {
		prompt, cached int
		first          time.Duration // first token after the request began
	}
	send := func(body map[string]any) turn {
		t0 := clk.now()
		evs, err := readSSE(t, post(t, ts.URL+"/v1/chat/completions", body).Body)
		if err != nil {
			t.Fatal(err)
		}
		r := summarize(t, evs)
		return turn{num(t, r.usage, "prompt_tokens"), num(t, r.usage, "prompt_tokens_details", "cached_tokens"),
			time.Duration(r.tokSent[0] - t0.UnixNano())}
	}
	a1 := send(bodyA)
	b := send(bodyB)
	if a1.prompt > 256-bs || b.prompt <= 256 {
		t.Fatalf("prompts A %d, B %d tokens: A must fit the local tier of 256 and B overflow it", a1.prompt, b.prompt)
	}
	a2 := send(bodyA) // all of A comes from the offload tier
	a3 := send(bodyA) // and is local again
	full := (a1.prompt - 1) / bs * bs
	for i, c := range []struct {
		got           turn
		local, loaded int
	}{{a1, 0, 0}, {b, 0, 0}, {a2, 0, full}, {a3, full, 0}} {
		if want := c.local + c.loaded; c.got.cached != want {
			t.Errorf("request %d: cached_tokens %d, want %d", i, c.got.cached, want)
		}
		want := ttft + prefill*time.Duration(c.got.prompt-c.local-c.loaded) + load*time.Duration(c.loaded)
		if c.got.first != want {
			t.Errorf("request %d: first token after %v, want %v", i, c.got.first, want)
		}
	}
	m := scrapeSim(t, ts.URL)
	queries := float64(3*a1.prompt + b.prompt)
	for name, want := range map[string]float64{
		metrics.PrefixQueries: queries, metrics.PrefixHits: float64(full),
		metrics.ExternalPrefixQuery: queries - float64(full), metrics.ExternalPrefixHits: float64(full),
	} {
		if m[name] != want {
			t.Errorf("%s = %v, want %v", name, m[name], want)
		}
	}
	if st := s.Stats(); st.CachedTokens != uint64(2*full) || st.OffloadBlocks == 0 || st.CacheEvictions == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestHideCachedTokens: with HideCachedTokens the responses carry no
// prompt_tokens_details, streaming or not, while the cache still works.
func TestHideCachedTokens(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{CacheTokens: 4096, HideCachedTokens: true})
	long := strings.Repeat("the same long system prompt. ", 20)
	for i := range 2 {
		u := decodeJSON(t, post(t, ts.URL+"/v1/chat/completions", chatBody(false, 3, long)).Body)["usage"].(map[string]any)
		if _, ok := u["prompt_tokens_details"]; ok || u["prompt_tokens"] == nil {
			t.Errorf("request %d: usage %v", i, u)
		}
		evs, err := readSSE(t, post(t, ts.URL+"/v1/chat/completions",
			with(chatBody(true, 3, long), "stream_options", map[string]any{"include_usage": true})).Body)
		if err != nil {
			t.Fatal(err)
		}
		if r := summarize(t, evs); r.usage["prompt_tokens_details"] != nil || r.usage["prompt_tokens"] == nil {
			t.Errorf("stream %d: usage %v", i, r.usage)
		}
	}
	if s.Stats().CachedTokens == 0 {
		t.Fatal("no cache hit: the test proves nothing")
	}
}
