package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
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

// timingConfig is the simulator of TestTimingBounds and
// BenchmarkTimingFidelity: a known time to first token and inter-token
// delay, kept to the microsecond (Precise), so that what is left is the
// client's error.
const (
	fidTTFT   = 50 * time.Millisecond
	fidDecode = 10 * time.Millisecond
	fidTokens = 15
)

func fidelityConvs() []conv.Conversation {
	var convs []conv.Conversation
	for _, c := range simpleConvs(2, 3) {
		for i := range c.Messages {
			c.Messages[i].OutputTokens = fidTokens
		}
		convs = append(convs, c)
	}
	return convs
}

// TestTimingBounds replays against the simulator with a known time to
// first token and inter-token delay and checks what holds however loaded
// the machine is: the server cannot send earlier than its schedule, so
// each recorded TTFT is at least the injected one and each latency at
// least TTFT plus the decode of the other tokens; and the recorded
// figures agree exactly with each other (TPOT is the mean ITL, TTFT plus
// the ITLs fit in the latency). A client that stamps from the wrong
// origin (e.g. the response headers) or adds up the gaps wrongly fails.
// How close the figures come to the injected ones is a measurement, not
// a pass/fail: BenchmarkTimingFidelity and mtbench's fidelity section.
func TestTimingBounds(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{TTFTBase: fidTTFT, DecodePerToken: fidDecode, Precise: true})
	res := replayT(t, Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 2}}, fidelityConvs())
	if len(res.recs) != 6 {
		t.Fatalf("%d records, want 6", len(res.recs))
	}
	for _, r := range res.recs {
		if !r.OK() || r.TTFTNs == nil || r.TPOTNs == nil || r.Chunks != fidTokens || len(r.ITLNs) != fidTokens-1 {
			t.Fatalf("record %+v", r)
		}
		ttft, lat := time.Duration(*r.TTFTNs), time.Duration(r.LatencyNs)
		var span time.Duration
		for _, g := range r.ITLNs {
			if g < 0 {
				t.Errorf("%s turn %d: negative ITL %v", r.ConversationID, r.Turn, r.ITLNs)
			}
			span += time.Duration(g)
		}
		if ttft < fidTTFT {
			t.Errorf("%s turn %d: TTFT %v before the server's first token (%v)", r.ConversationID, r.Turn, ttft, fidTTFT)
		}
		if min := fidTTFT + (fidTokens-1)*fidDecode; lat < min {
			t.Errorf("%s turn %d: latency %v, shorter than the server's schedule %v", r.ConversationID, r.Turn, lat, min)
		}
		if ttft+span > lat {
			t.Errorf("%s turn %d: TTFT %v + ITLs %v exceed the latency %v", r.ConversationID, r.Turn, ttft, span, lat)
		}
		if got, want := *r.TPOTNs*float64(fidTokens-1), float64(span); got < want-1 || got > want+1 {
			t.Errorf("%s turn %d: TPOT %v × %d = %v, the ITLs add up to %v", r.ConversationID, r.Turn, *r.TPOTNs, fidTokens-1, got, want)
		}
		if r.FirstToken == nil || !r.FirstToken.Equal(r.Start.Add(ttft)) || !r.End.Equal(r.Start.Add(lat)) {
			t.Errorf("%s turn %d: start %v first token %v end %v disagree with TTFT %v and latency %v",
				r.ConversationID, r.Turn, r.Start, r.FirstToken, r.End, ttft, lat)
		}
	}
}

// BenchmarkTimingFidelity measures how far the recorded TTFT, ITL, TPOT
// and latency are from the simulator's injected ones (medians of
// |recorded − injected|, in µs: the -err-us metrics), for scripts/bench.sh. It replays six
// requests per iteration; run it with -benchtime 10x or more on a quiet
// machine.
func BenchmarkTimingFidelity(b *testing.B) {
	srv, err := sim.Start(context.Background(), sim.Config{TTFTBase: fidTTFT, DecodePerToken: fidDecode, Precise: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var ttfts, itls, tpots, lats []time.Duration
	for b.Loop() {
		res, err := replayE(context.Background(), context.Background(),
			Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 1}}, fidelityConvs())
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res.recs {
			if !r.OK() || r.TTFTNs == nil || r.TPOTNs == nil {
				b.Fatalf("record %+v", r)
			}
			ttfts = append(ttfts, absDur(time.Duration(*r.TTFTNs)-fidTTFT))
			tpots = append(tpots, absDur(time.Duration(*r.TPOTNs)-fidDecode))
			lats = append(lats, absDur(time.Duration(r.LatencyNs)-fidTTFT-(fidTokens-1)*fidDecode))
			for _, g := range r.ITLNs {
				itls = append(itls, absDur(time.Duration(g)-fidDecode))
			}
		}
	}
	for name, v := range map[string][]time.Duration{"ttft": ttfts, "itl": itls, "tpot": tpots, "latency": lats} {
		b.ReportMetric(float64(median(v))/float64(time.Microsecond), name+"-err-us")
	}
}

// receiveDelays sends one streamed request of 20 tokens to the simulator
// at url and returns, per token, the time readStream stamped on it minus
// the simulator's send time ("sim_sent_ns"; same process, same clock).
func receiveDelays(url string) ([]time.Duration, error) {
	body := `{"model":"mtkit-sim","messages":[{"role":"user","content":"hi"}],"max_tokens":20,"stream":true}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	resp := &openai.Response{}
	err = openai.ReadStream(io.TeeReader(hr.Body, &raw), resp, time.Now)
	hr.Body.Close()
	if err != nil {
		return nil, err
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
			return nil, err
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			sent = append(sent, c.SimSentNS)
		}
	}
	ch := resp.Choices[0]
	if len(sent) != ch.Chunks || ch.Chunks != 20 {
		return nil, fmt.Errorf("%d token chunks sent, %d received", len(sent), ch.Chunks)
	}
	delays := make([]time.Duration, 0, len(sent))
	recv := ch.FirstToken.UnixNano()
	for i, s := range sent {
		if i > 0 {
			recv += ch.ITL[i-1]
		}
		delays = append(delays, time.Duration(recv-s))
	}
	return delays, nil
}

// TestReceiveAfterSend compares the time readStream stamps on each token
// with the simulator's send time: a token cannot be received before it
// was sent, so a client that stamps tokens early (e.g. all with the time
// of the first, or from a stale clock reading) fails. How small the delay
// is is a measurement: BenchmarkReceiveDelay.
func TestReceiveAfterSend(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{TTFTBase: 5 * time.Millisecond, DecodePerToken: 5 * time.Millisecond})
	for range 3 {
		delays, err := receiveDelays(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range delays {
			if d < 0 {
				t.Errorf("token %d stamped %v before the server sent it (all: %v)", i, -d, delays)
			}
		}
	}
}

// BenchmarkReceiveDelay measures the client's receive delay per token
// (readStream's stamp − the simulator's send time): median and p99, µs.
func BenchmarkReceiveDelay(b *testing.B) {
	srv, err := sim.Start(context.Background(), sim.Config{TTFTBase: 5 * time.Millisecond, DecodePerToken: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var all []time.Duration
	for b.Loop() {
		d, err := receiveDelays(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, d...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2])/float64(time.Microsecond), "delay-p50-us")
	b.ReportMetric(float64(all[len(all)*99/100])/float64(time.Microsecond), "delay-p99-us")
}
