package replay

import (
	"fmt"
	"slices"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// liveStats are the running figures of the progress line.
type liveStats struct {
	requests, errors, tokens int64
	ttft                     [512]int64 // recent TTFTs (ring)
	nTTFT                    int
}

func (l *liveStats) add(rec *record.Record) {
	if rec.Choice == 0 && !rec.Retried {
		l.requests++
		if !rec.OK() {
			l.errors++
		}
	}
	if rec.CompletionTokens != nil {
		l.tokens += *rec.CompletionTokens
	} else {
		l.tokens += int64(rec.Chunks)
	}
	if rec.TTFTNs != nil {
		l.ttft[l.nTTFT%len(l.ttft)] = *rec.TTFTNs
		l.nTTFT++
	}
}

// progress redraws a status line every second until done is closed, then
// ends the line (if it drew one) so that later output starts on its own.
func (r *runner) progress(done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	drawn := false
	for {
		select {
		case <-done:
			if drawn {
				fmt.Fprintln(r.sink.Progress)
			}
			return
		case <-tick.C:
			r.mu.Lock()
			line := r.statusLine()
			r.mu.Unlock()
			fmt.Fprintf(r.sink.Progress, "\r\033[K%s", line)
			drawn = true
		}
	}
}

// statusLine renders the live figures; r.mu is held.
func (r *runner) statusLine() string {
	el := time.Since(r.anchor)
	secs := el.Seconds()
	l := &r.live
	ended := r.sum.Finished + r.sum.FailedConversations + r.sum.Abandoned + r.sum.Unfinished
	s := fmt.Sprintf("%s conv %d/%d req %d err %d  %.1f req/s %.0f tok/s",
		el.Truncate(time.Second), ended, r.sum.Started, l.requests, l.errors,
		float64(l.requests)/secs, float64(l.tokens)/secs)
	if n := min(l.nTTFT, len(l.ttft)); n > 0 {
		v := slices.Clone(l.ttft[:n])
		slices.Sort(v)
		p := func(q float64) time.Duration { return time.Duration(v[int(q*float64(n-1))]) }
		s += fmt.Sprintf("  ttft p50 %s p99 %s", p(0.5).Round(time.Millisecond), p(0.99).Round(time.Millisecond))
	}
	var frac float64
	switch {
	case r.o.Duration > 0:
		frac = secs / r.o.Duration.Seconds()
	case r.o.MaxRequests > 0:
		frac = float64(l.requests) / float64(r.o.MaxRequests)
	case !r.o.Loop && r.src.total > 0:
		frac = float64(ended) / float64(r.src.total)
	}
	if frac > 0 && frac < 1 {
		eta := time.Duration(float64(el) * (1 - frac) / frac)
		s += fmt.Sprintf("  eta %s", eta.Truncate(time.Second))
	}
	return s
}
