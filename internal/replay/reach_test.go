package replay

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
)

// closedURL returns the URL of a loopback port that nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// TestFailFastUnreachable: with nothing listening at the URL, a run stops
// with an error after a few connect failures instead of retrying every
// turn of every conversation (16 conversations × 4 turns × 4 attempts
// before). Counted in attempts, not wall time.
func TestFailFastUnreachable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxModelLen int // set: no /v1/models probe, the requests find out
		clients     int
		maxAttempts int64
	}{
		{"probe at start", 0, 4, 0},
		{"first requests", 8192, 1, FailFastAttempts},
		{"first requests, concurrent", 8192, 4, FailFastAttempts + 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{URL: closedURL(t), MaxModelLen: tc.maxModelLen, Schedule: schedule.Closed{Clients: tc.clients}, MaxRetries: 3}
			res, err := replayE(context.Background(), context.Background(), o, simpleConvs(16, 4))
			if err == nil || !strings.Contains(err.Error(), "cannot reach the server") {
				t.Fatalf("err = %v, want cannot reach the server", err)
			}
			var attempts int64
			if res.sum != nil {
				attempts = res.sum.Attempts
			}
			if attempts > tc.maxAttempts || int64(len(res.recs)) > tc.maxAttempts {
				t.Errorf("%d attempts, %d records before stopping; want at most %d", attempts, len(res.recs), tc.maxAttempts)
			}
			if int64(len(res.recs)) != attempts {
				t.Errorf("%d records of %d attempts: every attempt made is recorded", len(res.recs), attempts)
			}
			if tc.maxAttempts > 0 && attempts < FailFastAttempts {
				t.Errorf("%d attempts, want at least %d before giving up", attempts, FailFastAttempts)
			}
		})
	}
}

// TestConnectFailuresAfterContactAreRetried: once the server answered,
// connect failures are retried as before (a restarting server).
func TestConnectFailuresAfterContactAreRetried(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, func(fs *fakeServer) {
		fs.hook = func(w http.ResponseWriter, r *http.Request, req *seenRequest) bool {
			if req.N > 1 {
				// Close the listener's connection without an answer: a
				// connect-class error that is not a dial failure.
				hj, _ := w.(http.Hijacker)
				c, _, _ := hj.Hijack()
				c.Close()
				return true
			}
			return false
		}
	})
	o := Options{URL: fs.URL, MaxRetries: 1}
	res, err := replayE(context.Background(), context.Background(), o, simpleConvs(1, 3))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.sum.Attempts != 5 {
		t.Errorf("%d attempts, want 5 (1 + 2 turns × 2)", res.sum.Attempts)
	}
}

func TestTimeoutFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stretch   bool
		base      time.Duration
		maxTokens int
		want      time.Duration
	}{
		{false, 120 * time.Second, 5000, 120 * time.Second},
		{true, 120 * time.Second, 100, 120 * time.Second},
		{true, 120 * time.Second, 5000, 1000 * time.Second}, // int(5000 * 0.2)
		{true, 120 * time.Second, 1004, 200 * time.Second},  // int(200.8): vLLM truncates
		{true, 120 * time.Second, 0, 120 * time.Second},
	} {
		o := Options{RequestTimeout: tc.base, StretchTimeout: tc.stretch}
		if got := o.timeoutFor(tc.maxTokens); got != tc.want {
			t.Errorf("stretch %v, base %s, max_tokens %d: %s, want %s", tc.stretch, tc.base, tc.maxTokens, got, tc.want)
		}
	}
}

func TestMinTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    Options
		max  int
		want int
	}{
		{Options{}, 50, 0},
		{Options{SendMinTokens: true}, 50, 50},
		{Options{FixedMinTokens: 7, SendMinTokens: true}, 50, 7},
	} {
		if got := tc.o.minTokens(tc.max); got != tc.want {
			t.Errorf("%+v: minTokens(%d) = %d, want %d", tc.o, tc.max, got, tc.want)
		}
	}
	if got := (&Options{FixedMaxTokens: -1}).outputTokens(&conv.Message{OutputTokens: 9}, nil); got != 0 {
		t.Errorf("FixedMaxTokens -1: max_tokens %d, want 0 (not sent)", got)
	}
}

// silentServer accepts connections and reads requests but never answers
// until the client goes away (issue 24: the /v1/models probe waited 35 s
// and, with --model, every turn waited for --request-timeout).
func silentServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client go away
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHungServer: a server that accepts connections and never answers
// stops the run with a clear error, at the start-up probe (no --model) or
// once no request of the first HungAfter got a response head (--model and
// --max-model-len, no probe); the requests in flight are cancelled and
// recorded. Without the bounds the run waited 30 s, or 10 minutes.
func TestHungServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		model       string
		maxModelLen int
		want        string
	}{
		{"probe at start", "", 0, "did not answer GET "},
		{"probe with --model", "m", 0, "did not answer GET "},
		{"first requests", "m", 8192, "answered none of the requests in 100ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{URL: silentServer(t), Model: tc.model, MaxModelLen: tc.maxModelLen, Schedule: schedule.Closed{Clients: 4}, MaxRetries: 3,
				ProbeTimeout: 50 * time.Millisecond, HungAfter: 100 * time.Millisecond}
			type outcome struct {
				res *result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := replayE(context.Background(), context.Background(), o, simpleConvs(16, 4))
				done <- outcome{res, err}
			}()
			var got outcome
			select {
			case got = <-done:
			case <-time.After(time.Minute):
				t.Fatal("run still waiting on a silent server after a minute")
			}
			if got.err == nil || !strings.Contains(got.err.Error(), "accepts connections but "+tc.want) {
				t.Fatalf("err = %v, want 'accepts connections but %s'", got.err, tc.want)
			}
			if len(got.res.recs) > 4 {
				t.Errorf("%d records: more turns started after the stop", len(got.res.recs))
			}
			for _, r := range got.res.recs {
				if r.ErrorClass != record.ErrCanceled {
					t.Errorf("record %+v: want class canceled", r)
				}
			}
		})
	}
}
