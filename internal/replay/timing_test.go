package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/sim"
)

func median(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestTimingFidelity replays against the simulator with a known time to
// first token and inter-token delay and checks that the recorded TTFT,
// ITL and TPOT match them. The tolerances are generous: the machine is
// shared and noisy. It does not run in parallel with the package's other
// tests, whose load would show up in the timings.
func TestTimingFidelity(t *testing.T) { //nolint:paralleltest // timing needs a quiet process
	const (
		ttft   = 50 * time.Millisecond
		decode = 10 * time.Millisecond
		tokens = 15
		tol    = 5 * time.Millisecond
	)
	// Precise: the simulator keeps its own schedule to the microsecond, so
	// what is left is the client's error.
	srv := startSim(t, sim.Config{TTFTBase: ttft, DecodePerToken: decode, Precise: true})
	var convs []conv.Conversation
	for _, c := range simpleConvs(2, 3) {
		for i := range c.Messages {
			c.Messages[i].OutputTokens = tokens
		}
		convs = append(convs, c)
	}
	res := replayT(t, Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Clients: 1}, convs)
	var ttfts, itls, tpots, e2e []time.Duration
	for _, r := range res.recs {
		if !r.OK() || r.TTFTNs == nil || r.TPOTNs == nil || r.Chunks != tokens || len(r.ITLNs) != tokens-1 {
			t.Fatalf("record %+v", r)
		}
		ttfts = append(ttfts, time.Duration(*r.TTFTNs))
		tpots = append(tpots, time.Duration(*r.TPOTNs))
		e2e = append(e2e, time.Duration(r.LatencyNs))
		for _, g := range r.ITLNs {
			itls = append(itls, time.Duration(g))
		}
	}
	for _, m := range []struct {
		name string
		v    []time.Duration
		want time.Duration
	}{
		{"ttft", ttfts, ttft},
		{"itl", itls, decode},
		{"tpot", tpots, decode},
		{"latency", e2e, ttft + (tokens-1)*decode},
	} {
		if got := median(m.v); absDur(got-m.want) > tol {
			t.Errorf("median %s %v, injected %v (±%v); all: %v", m.name, got, m.want, tol, m.v)
		}
	}
}

// TestReceiveDelay compares the time readStream stamps on each token with
// the simulator's send time ("sim_sent_ns"): the client's own delay must
// be small. Not parallel, for the same reason as TestTimingFidelity.
func TestReceiveDelay(t *testing.T) { //nolint:paralleltest // timing needs a quiet process
	srv := startSim(t, sim.Config{TTFTBase: 5 * time.Millisecond, DecodePerToken: 5 * time.Millisecond})
	body := `{"model":"mtkit-sim","messages":[{"role":"user","content":"hi"}],"max_tokens":20,"stream":true}`
	var delays []time.Duration
	for range 3 {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		hr, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var raw bytes.Buffer
		resp := &response{}
		err = readStream(io.TeeReader(hr.Body, &raw), resp, time.Now)
		hr.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var sent []int64
		sc := bufio.NewScanner(&raw)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || line == "[DONE]" {
				continue
			}
			var c struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
				SimSentNS int64 `json:"sim_sent_ns"`
			}
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatal(err)
			}
			if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				sent = append(sent, c.SimSentNS)
			}
		}
		ch := resp.Choices[0]
		if len(sent) != ch.Chunks || ch.Chunks != 20 {
			t.Fatalf("%d token chunks sent, %d received", len(sent), ch.Chunks)
		}
		recv := ch.FirstToken.UnixNano()
		for i, s := range sent {
			if i > 0 {
				recv += ch.ITL[i-1]
			}
			delays = append(delays, time.Duration(recv-s))
		}
	}
	if m := median(delays); m < 0 || m > 3*time.Millisecond {
		t.Errorf("median receive delay %v, want under 3ms (all: %v)", m, delays)
	}
}
