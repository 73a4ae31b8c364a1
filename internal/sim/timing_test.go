package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// virtualClock is a clock whose time moves only when the server waits: a
// wait until a deadline jumps to it at once. A server on it serves its
// exact schedule, whatever the load of the machine. One request at a time.
type virtualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *virtualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *virtualClock) pacer(bool) pacer { return c }

func (c *virtualClock) until(ctx context.Context, deadline time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if deadline.After(c.t) {
		c.t = deadline
	}
	return nil
}

func (c *virtualClock) stop() {}

// TestSchedule checks the timing model on a virtual clock, exactly: the
// first token goes out at ttft + prefill × uncached prompt tokens after
// the request is admitted, the others every decode interval after it,
// a stall moves the rest of the schedule, and a cached prefix shortens
// the prefill. The stamps are the server's own (sim_sent_ns).
func TestSchedule(t *testing.T) {
	t.Parallel()
	const n = 12
	long := strings.Repeat("cat ", 200)
	tests := []struct {
		name   string
		cfg    Config
		prompt string
		repeat bool // send the prompt twice, check the second (cached) request
		first  func(prompt int64, cached int64) time.Duration
		gap    time.Duration
		stall  time.Duration // one extra gap of this length
	}{
		{"base", Config{TTFTBase: 60 * time.Millisecond, DecodePerToken: 15 * time.Millisecond}, "hi", false,
			func(int64, int64) time.Duration { return 60 * time.Millisecond }, 15 * time.Millisecond, 0},
		{"prefill", Config{TTFTBase: 10 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodePerToken: 5 * time.Millisecond}, long, false,
			func(p, _ int64) time.Duration { return 10*time.Millisecond + time.Duration(p)*100*time.Microsecond }, 5 * time.Millisecond, 0},
		{"cached prefix", Config{TTFTBase: 10 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodePerToken: 5 * time.Millisecond,
			CacheTokens: 10000}, long, true,
			func(p, c int64) time.Duration { return 10*time.Millisecond + time.Duration(p-c)*100*time.Microsecond }, 5 * time.Millisecond, 0},
		{"stall", Config{Seed: 3, TTFTBase: 20 * time.Millisecond, DecodePerToken: 4 * time.Millisecond, Faults: Faults{StallRate: 1, Stall: 700 * time.Millisecond}}, "hi", false,
			func(int64, int64) time.Duration { return 20 * time.Millisecond }, 4 * time.Millisecond, 700 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ts := newTestServer(t, tt.cfg)
			// Small stamps: summarize reads them as float64, exact to 2^53 ns.
			t0 := time.Unix(1000, 0)
			clk := &virtualClock{t: t0}
			s.clk = clk
			body := with(chatBody(true, n, tt.prompt), "stream_options", map[string]any{"include_usage": true})
			if tt.repeat {
				if _, err := readSSE(t, post(t, ts.URL+"/v1/chat/completions", body).Body); err != nil {
					t.Fatal(err)
				}
				t0 = clk.now()
			}
			evs, err := readSSE(t, post(t, ts.URL+"/v1/chat/completions", body).Body)
			if err != nil {
				t.Fatal(err)
			}
			r := summarize(t, evs)
			prompt := int64(num(t, r.usage, "prompt_tokens"))
			cached := int64(num(t, r.usage, "prompt_tokens_details", "cached_tokens"))
			if tt.repeat && cached == 0 {
				t.Fatal("second request got no cached tokens")
			}
			if len(r.tokSent) != n {
				t.Fatalf("%d token stamps, want %d", len(r.tokSent), n)
			}
			want := t0.Add(tt.first(prompt, cached)).UnixNano()
			if r.tokSent[0] != want {
				t.Errorf("first token at %v after admission, want %v", time.Duration(r.tokSent[0]-t0.UnixNano()), time.Duration(want-t0.UnixNano()))
			}
			stalls := 0
			for i := 1; i < n; i++ {
				switch g := time.Duration(r.tokSent[i] - r.tokSent[i-1]); {
				case g == tt.gap:
				case tt.stall > 0 && g == tt.gap+tt.stall:
					stalls++
				default:
					t.Errorf("gap %d: %v, want %v", i, g, tt.gap)
				}
			}
			if want := min(int(tt.stall), 1); stalls != want {
				t.Errorf("%d stalls in the gaps %v, want %d", stalls, r.tokSent, want)
			}
		})
	}
}

// TestTimingRealClock checks on the real clock what holds however loaded
// the machine is: the server never sends a token before its schedule, as
// seen by the client and as stamped by the server (a span between two
// tokens may be shorter than scheduled when the first of them was late). (How close to the
// schedule it comes is BenchmarkTiming's measurement.)
func TestTimingRealClock(t *testing.T) {
	t.Parallel()
	for _, precise := range []bool{false, true} {
		cfg := Config{TTFTBase: 20 * time.Millisecond, DecodePerToken: 3 * time.Millisecond, Precise: precise}
		_, ts := newTestServer(t, cfg)
		const n = 20
		start := time.Now()
		evs, err := readSSE(t, post(t, ts.URL+"/v1/chat/completions", chatBody(true, n, "hi")).Body)
		if err != nil {
			t.Fatal(err)
		}
		r := summarize(t, evs)
		if ttft := r.firstTok.Sub(start); ttft < cfg.TTFTBase {
			t.Errorf("precise=%v: first token after %v, before the TTFT of %v", precise, ttft, cfg.TTFTBase)
		}
		if len(r.tokSent) != n {
			t.Fatalf("%d token stamps", len(r.tokSent))
		}
		// Token k is scheduled at admission + TTFT + k decode intervals, on
		// an absolute clock (a late token does not delay the next one), and
		// admission is not before start: no token may be sent earlier.
		for k, sent := range r.tokSent {
			if early := start.Add(cfg.TTFTBase + time.Duration(k)*cfg.DecodePerToken).Sub(time.Unix(0, sent)); early > 0 {
				t.Errorf("precise=%v: token %d sent %v before its earliest schedule", precise, k, early)
			}
		}
	}
}

// BenchmarkTiming measures how far the real-clock server comes from its
// schedule: TTFT as seen by the client, and the server's span of 39
// decode intervals, each as median |measured − scheduled| in µs.
func BenchmarkTiming(b *testing.B) {
	for _, precise := range []bool{false, true} {
		b.Run(fmt.Sprintf("precise=%v", precise), func(b *testing.B) {
			cfg := Config{TTFTBase: 10 * time.Millisecond, DecodePerToken: 4 * time.Millisecond, Precise: precise}
			_, ts := newTestServer(b, cfg)
			const n = 40
			var ttftErr, spanErr []time.Duration
			for b.Loop() {
				start := time.Now()
				evs, err := readSSE(b, post(b, ts.URL+"/v1/chat/completions", chatBody(true, n, "hi")).Body)
				if err != nil {
					b.Fatal(err)
				}
				r := summarize(b, evs)
				ttftErr = append(ttftErr, r.firstTok.Sub(start)-cfg.TTFTBase)
				spanErr = append(spanErr, time.Duration(r.tokSent[n-1]-r.tokSent[0])-(n-1)*cfg.DecodePerToken)
			}
			for name, v := range map[string][]time.Duration{"ttft": ttftErr, "span": spanErr} {
				for i := range v {
					v[i] = max(v[i], -v[i])
				}
				sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
				b.ReportMetric(float64(v[len(v)/2])/float64(time.Microsecond), name+"-err-us")
			}
		})
	}
}

func TestDecodeSlowdown(t *testing.T) {
	t.Parallel()
	s, err := New(Config{DecodePerToken: 10 * time.Millisecond, DecodeSlowdownPerSeq: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := s.interval(); got != 10*time.Millisecond {
		t.Fatalf("idle interval %v", got)
	}
	if err := s.adm.acquire(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := s.interval(); got != 20*time.Millisecond {
		t.Fatalf("interval with 3 running %v, want 20ms", got)
	}
	s.adm.release(3)
}
