package replay

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
)

// watchedSource counts the sessions read from it and closes read once
// want have been read, or at its end.
type watchedSource struct {
	source.Source
	mu   sync.Mutex
	n    int
	want int
	read chan struct{}
	once sync.Once
}

func (w *watchedSource) Next() (conv.Conversation, bool) {
	c, ok := w.Source.Next()
	w.mu.Lock()
	if ok {
		w.n++
	}
	if !ok || w.n == w.want {
		w.once.Do(func() { close(w.read) })
	}
	w.mu.Unlock()
	return c, ok
}

func (w *watchedSource) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// TestArrivalsReadAhead checks the look-ahead of arrivals (issue 26):
// sessions are read from the source, and their first requests built,
// before their start times, up to the window's bounds in sessions and in
// bytes (at least one session). The first session starts at once, the
// others an hour later: everything read before the run stops was read
// ahead.
func TestArrivalsReadAhead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		bounds aheadBounds
		n      int // sessions in the input
		want   int // sessions read: the first, then the window
	}{
		{"whole input", aheadBounds{}, 6, 6},
		{"sessions", aheadBounds{sessions: 3}, 10, 1 + 3},
		{"bytes", aheadBounds{bytes: 1}, 10, 1 + 1},
		{"bytes of two", aheadBounds{bytes: 3000}, 10, 1 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var convs []conv.Conversation
			for i := range tc.n {
				ts := 3_600_000.0 // an hour
				if i == 0 {
					ts = 0
				}
				c := tracedConv(fmt.Sprintf("s%d", i), ts)
				c.Messages[0].Content = strings.Repeat("x", 1000) // 1000 bytes of text, ~1100 of body
				convs = append(convs, c)
			}
			src := &watchedSource{Source: source.Slice(convs), want: tc.want, read: make(chan struct{})}
			fs := newFakeServer(t, nil)
			stop, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			recs := &memRecords{}
			go func() {
				o := Options{URL: fs.URL, Model: "m", Stream: true, Schedule: schedule.Trace{Scale: 1}, RequestTimeout: 20 * time.Second, ahead: tc.bounds}
				_, err := Run(stop, context.Background(), o, src, Sink{Records: recs})
				done <- err
			}()
			select {
			case <-src.read:
			case <-time.After(30 * time.Second): // a hang guard, not a timing judgement
				t.Fatalf("%d sessions read ahead after 30 s, want %d", src.count(), tc.want)
			}
			// The first session goes at once; the rest wait for an hour.
			for len(fs.requests()) == 0 {
				select {
				case err := <-done:
					t.Fatalf("Run ended before the first request: %v", err)
				case <-time.After(time.Millisecond):
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := src.count(); got != tc.want {
				t.Errorf("%d sessions read, want %d", got, tc.want)
			}
			if got := len(recs.all()); got != 1 {
				t.Errorf("%d records, want 1 (the first session's)", got)
			}
		})
	}
}
