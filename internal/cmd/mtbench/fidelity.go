package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/stats"
)

// Fidelity timing model: the simulator emits the first token fidTTFT
// after it has the request and the next ones every fidDecode.
const (
	fidTTFT   = 20 * time.Millisecond
	fidDecode = 20 * time.Millisecond
	fidTokens = 20
)

// fidelity compares the TTFT and ITL that mtrun recorded with the truth
// taken from the simulator's own stamps, at 1, 100 and 1,000 concurrent
// streams. ITL error = recorded gap − gap between the server's send
// stamps of the same two chunks. TTFT error = recorded TTFT − (server
// send of the first token − server receipt of the request): the
// request's and the first chunk's transit over loopback are part of it.
// Requests are matched by the X-Session-ID header (--session-id-header)
// and their order within the conversation.
func (b *bench) fidelity(ctx context.Context, dir string) error {
	const sec = "fidelity"
	h, err := startSim(sim.Config{TTFTBase: fidTTFT, DecodePerToken: fidDecode}, true)
	if err != nil {
		return err
	}
	defer h.close()
	for _, streams := range []int{1, 100, 1000} {
		// One stream is cheap: run it longer for enough TTFT samples.
		dur := pick(b, 1500*time.Millisecond, 4*time.Second)
		switch streams {
		case 1:
			dur = pick(b, 2*time.Second, 10*time.Second)
		case 1000:
			// 1,000 first turns (warm-up) take over 1.5 s on a loaded
			// machine: a short smoke run then measured nothing.
			dur = pick(b, 3*time.Second, 4*time.Second)
		}
		path := filepath.Join(dir, fmt.Sprintf("c%d.jsonl", streams))
		if err := writeConvs(path, convSpec{n: streams, turns: 20, userWords: 8, output: fidTokens, seed: uint64(streams)}); err != nil {
			return err
		}
		ttftT, itlT := atMost(1), atMost(1)
		if streams == 1 {
			ttftT, itlT = atMost(0.2), atMost(0.2)
		}
		if streams == 100 {
			ttftT, itlT = nil, nil
		}
		for i := range b.runs {
			h.tap.take()
			// A short random think time spreads the streams over the
			// decode interval (a batched engine would send them all at
			// once: that burst is not what this figure is about); the
			// first turn of every stream, which all start together, is
			// warm-up and not counted.
			args := []string{"--clients", fmt.Sprint(streams), "--session-id-header", "--duration", dur.String(),
				"--think-time", "uniform:0ms:" + fidDecode.String(), "--warmup-turns", fmt.Sprint(streams), "--tokenizer", "none"}
			recs := filepath.Join(dir, fmt.Sprintf("c%d.records.jsonl", streams))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, rs, err := b.mtrunRun(ctx, h.URL, path, recs, args, runOpts{})
			runtime.ReadMemStats(&after)
			if err != nil {
				return err
			}
			m := matchStamps(rs, h.tap.take())
			if m.unmatched > 0 || m.requests == 0 {
				return fmt.Errorf("%d streams: %d of %d measured requests could not be matched with the server's stamps", streams, m.unmatched, m.requests+m.unmatched)
			}
			b.logf("run %d, %d streams: %d requests, %d gaps; TTFT error p50 %.3f p99 %.3f max %.3f ms; ITL error p50 %.3f p99 %.3f max %.3f ms",
				i+1, streams, m.requests, len(m.itl), q(m.ttft, .5), q(m.ttft, .99), q(m.ttft, 1), q(m.itl, .5), q(m.itl, .99), q(m.itl, 1))
			b.logf("  where (p50/p99/max ms): request transit %s; chunk held by the server %s, by the client %s; chunks held over 1 ms: %d by the server, %d by the client; the simulator's process (mtbench) collected garbage %d times, paused %.3f ms",
				spread(m.transit), spread(m.srv), spread(m.cli), m.lateSrv, m.lateCli, after.NumGC-before.NumGC, float64(after.PauseTotalNs-before.PauseTotalNs)/1e6)
			name := fmt.Sprintf("%d stream(s)", streams)
			b.figs.add(sec, "TTFT |error| p50, "+name, "ms", nil, q(m.ttft, .5))
			b.figs.add(sec, "TTFT |error| p99, "+name, "ms", ttftT, q(m.ttft, .99))
			b.figs.add(sec, "TTFT |error| max, "+name, "ms", nil, q(m.ttft, 1))
			b.figs.add(sec, "ITL |error| p50, "+name, "ms", nil, q(m.itl, .5))
			b.figs.add(sec, "ITL |error| p99, "+name, "ms", itlT, q(m.itl, .99))
			b.figs.add(sec, "ITL |error| max, "+name, "ms", nil, q(m.itl, 1))
		}
	}
	b.figs.note(sec, "TTFT |error| p99, 1 stream(s)", fmt.Sprintf("simulator: TTFT %v, a token every %v, %d tokens; truth = the simulator's receive and send stamps; TTFT error includes the request's and the first chunk's loopback transit", fidTTFT, fidDecode, fidTokens))
	return nil
}

// matched are the absolute errors, in milliseconds, of measured records.
type matched struct {
	ttft, itl           []float64 // sorted
	requests, unmatched int
	// Where the errors come from, in milliseconds (sorted). A TTFT error
	// is the request's transit (client's start → server's receipt) plus
	// the first chunk's delivery delay (server's stamp → client's read);
	// an ITL error is the difference of two chunks' delivery delays. Each
	// delay is split at the return of the server's flush (served.flushed):
	// srv is stamp → min(read, flush returned), cli the rest. The client's
	// read times are the record's start + TTFT + ITL gaps (the two
	// processes share the machine's clock).
	transit, srv, cli []float64
	// lateSrv and lateCli count chunks whose srv or cli part is over 1 ms.
	lateSrv, lateCli int
}

// attribute adds the transit and the per-chunk delay split of one matched
// request to m; without a flush time for every chunk it adds nothing.
func (m *matched) attribute(r *record.Record, s *served) {
	if len(s.flushed) != len(s.stamps) {
		return
	}
	m.transit = append(m.transit, float64(s.recv-r.Start.UnixNano())/1e6)
	read := r.Start.UnixNano() + *r.TTFTNs
	for j, stamp := range s.stamps {
		if j > 0 {
			read += r.ITLNs[j-1]
		}
		held := min(read, s.flushed[j]) - stamp
		srv, cli := float64(held)/1e6, float64(read-stamp-held)/1e6
		m.srv = append(m.srv, srv)
		m.cli = append(m.cli, cli)
		if srv > 1 {
			m.lateSrv++
		}
		if cli > 1 {
			m.lateCli++
		}
	}
}

// matchStamps pairs each measured record with the server's view of the
// same request: the n-th request of a session id is the n-th attempt of
// that conversation in start order.
func matchStamps(recs []*record.Record, srv map[string][]*served) matched {
	var m matched
	byConv := map[string][]*record.Record{}
	for _, r := range recs {
		if r.Choice == 0 {
			byConv[r.ConversationID] = append(byConv[r.ConversationID], r)
		}
	}
	for id, rs := range byConv {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		ss := srv[id]
		for k, r := range rs {
			if !r.Measured() {
				continue
			}
			if k >= len(ss) || !r.OK() || r.TTFTNs == nil || ss[k].bad > 0 || len(ss[k].stamps) != r.Chunks || len(r.ITLNs) != r.Chunks-1 {
				m.unmatched++
				continue
			}
			m.requests++
			s := ss[k]
			m.attribute(r, s)
			trueTTFT := s.stamps[0] - s.recv
			m.ttft = append(m.ttft, math.Abs(float64(*r.TTFTNs-trueTTFT))/1e6)
			for j, gap := range r.ITLNs {
				trueGap := s.stamps[j+1] - s.stamps[j]
				m.itl = append(m.itl, math.Abs(float64(gap-trueGap))/1e6)
			}
		}
	}
	for _, v := range [][]float64{m.ttft, m.itl, m.transit, m.srv, m.cli} {
		slices.Sort(v)
	}
	return m
}

// q is the p-quantile of sorted values (type 7, as mtstats computes).
func q(sorted []float64, p float64) float64 { return stats.Quantile(sorted, p) }

// spread formats the p50, p99 and max of sorted values in milliseconds.
func spread(sorted []float64) string {
	if len(sorted) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f/%.3f/%.3f", q(sorted, .5), q(sorted, .99), q(sorted, 1))
}
