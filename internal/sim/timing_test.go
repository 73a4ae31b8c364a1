package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// TestTiming checks TTFT and inter-token intervals, as seen by the client
// and as stamped by the server. Tolerances are generous: the machine is
// shared and noisy.
func TestTiming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      Config
		prompt   string
		ttft     time.Duration // expected
		interval time.Duration
	}{
		{"base", Config{TTFTBase: 60 * time.Millisecond, DecodePerToken: 15 * time.Millisecond}, "hi", 60 * time.Millisecond, 15 * time.Millisecond},
		// ~1000 prompt tokens at 0.1ms each add ~100ms.
		{"prefill", Config{TTFTBase: 10 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodePerToken: 5 * time.Millisecond},
			string(bytes.Repeat([]byte("cat "), 1000)), 0, 5 * time.Millisecond},
		{"precise", Config{TTFTBase: 5 * time.Millisecond, DecodePerToken: 4 * time.Millisecond, Precise: true}, "hi", 5 * time.Millisecond, 4 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ts := newTestServer(t, tt.cfg)
			// The machine is shared: a run can be starved of CPU, so
			// timing gets five tries.
			var problems []string
			for try := range 5 {
				problems = measureTiming(t, ts.URL, tt.cfg, tt.prompt, tt.ttft, tt.interval)
				if len(problems) == 0 {
					return
				}
				t.Logf("try %d: %s", try+1, strings.Join(problems, "; "))
			}
			t.Error(strings.Join(problems, "; "))
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

func TestSleeper(t *testing.T) {
	t.Parallel()
	for _, precise := range []bool{false, true} {
		sl := sleeper{precise: precise}
		deadline := time.Now().Add(3 * time.Millisecond)
		if err := sl.until(context.Background(), deadline); err != nil {
			t.Fatal(err)
		}
		if late := time.Since(deadline); late < 0 {
			t.Fatalf("precise=%v woke %v early", precise, -late)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := sl.until(ctx, time.Now().Add(time.Hour)); err == nil {
			t.Fatal("until ignored a cancelled context")
		}
		sl.stop()
	}
}

// measureTiming runs one stream and returns what is out of tolerance.
func measureTiming(t *testing.T, url string, cfg Config, prompt string, wantTTFT, interval time.Duration) []string {
	t.Helper()
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	const n = 40
	start := time.Now()
	resp := post(t, url+"/v1/chat/completions", with(chatBody(true, n, prompt), "stream_options", map[string]any{"include_usage": true}))
	evs, err := readSSE(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := summarize(t, evs)
	want := wantTTFT
	if want == 0 {
		want = cfg.TTFTBase + cfg.PrefillPerToken*time.Duration(num(t, r.usage, "prompt_tokens"))
	}
	ttft := r.firstTok.Sub(start)
	if ttft < want-2*time.Millisecond || ttft > want+80*time.Millisecond {
		errorf("TTFT %v, want about %v", ttft, want)
	}
	// Server-side stamps: the decode schedule is absolute from the first
	// token, so the span of n-1 intervals does not drift.
	var tok []int64
	for i, ev := range evs {
		if ev.obj == nil || len(ev.obj["choices"].([]any)) == 0 {
			continue
		}
		if d, _ := ev.obj["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any); d["role"] == nil {
			tok = append(tok, r.sentNS[i])
		}
	}
	if len(tok) != n {
		t.Fatalf("%d token stamps", len(tok))
	}
	span := time.Duration(tok[n-1] - tok[0])
	wantSpan := interval * (n - 1)
	if span < wantSpan-time.Millisecond || span > wantSpan+wantSpan/4+20*time.Millisecond {
		errorf("server span of %d intervals %v, want about %v", n-1, span, wantSpan)
	}
	gaps := make([]time.Duration, 0, n-1)
	for i := 1; i < n; i++ {
		gaps = append(gaps, time.Duration(tok[i]-tok[i-1]))
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	// A spinning (precise) server is the first to be descheduled on a
	// busy machine and then catches up in bursts: check its gaps only
	// for the upper bound.
	if med := gaps[len(gaps)/2]; (!cfg.Precise && med < interval*8/10) || med > interval*3/2+2*time.Millisecond {
		errorf("median server gap %v, want about %v", med, interval)
	}
	// The client sees the same span.
	cspan := r.tokTimes[len(r.tokTimes)-1].Sub(r.tokTimes[0])
	if cspan < wantSpan-5*time.Millisecond || cspan > wantSpan+wantSpan/4+40*time.Millisecond {
		errorf("client span %v, want about %v", cspan, wantSpan)
	}
	t.Logf("TTFT %v (want %v), server span %v, client span %v (want %v)", ttft, want, span, cspan, wantSpan)
	return problems
}
