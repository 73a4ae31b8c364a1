package sim

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"
)

func TestFailEvery(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{Faults: Faults{FailEvery: 5, ErrorStatus: 503}})
	var got []int
	for range 12 {
		resp := post(t, ts.URL+"/v1/chat/completions", chatBody(false, 1, "x"))
		got = append(got, resp.StatusCode)
		if resp.StatusCode == 503 {
			e := decodeJSON(t, resp.Body)["error"].(map[string]any)
			if e["type"] != "server_error" || e["code"] != "simulated_error" {
				t.Errorf("error body %v", e)
			}
		}
	}
	for i, code := range got {
		want := 200
		if (i+1)%5 == 0 {
			want = 503
		}
		if code != want {
			t.Fatalf("statuses %v: request %d got %d, want %d", got, i+1, code, want)
		}
	}
	if st := s.Stats(); st.InjectedErrors != 2 || st.Completed != 10 {
		t.Errorf("stats %+v", st)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		faults Faults
		stream bool
		check  func(t *testing.T, s *Server, status int, header map[string][]string, body io.Reader)
	}{
		{"error rate", Faults{ErrorRate: 1, ErrorStatus: 502}, true, func(t *testing.T, s *Server, status int, _ map[string][]string, body io.Reader) {
			if status != 502 {
				t.Fatalf("status %d", status)
			}
			if e := decodeJSON(t, body)["error"]; e == nil {
				t.Fatal("no error object")
			}
		}},
		{"rate limit", Faults{RateLimitRate: 1, RetryAfter: 1500 * time.Millisecond}, false, func(t *testing.T, s *Server, status int, h map[string][]string, body io.Reader) {
			if status != 429 {
				t.Fatalf("status %d", status)
			}
			if ra := h["Retry-After"]; len(ra) != 1 || ra[0] != "2" {
				t.Errorf("Retry-After %v, want 2", ra)
			}
			if ra := h["Retry-After-Ms"]; len(ra) != 1 || ra[0] != "1500" {
				t.Errorf("retry-after-ms %v, want 1500", ra)
			}
			if e := decodeJSON(t, body)["error"].(map[string]any); e["code"] != "rate_limit_exceeded" {
				t.Errorf("error %v", e)
			}
			if s.Stats().RateLimited != 1 {
				t.Errorf("stats %+v", s.Stats())
			}
		}},
		{"stall", Faults{StallRate: 1, Stall: 300 * time.Millisecond}, true, func(t *testing.T, s *Server, status int, _ map[string][]string, body io.Reader) {
			evs, err := readSSE(t, body)
			if err != nil {
				t.Fatal(err)
			}
			r := summarize(t, evs)
			if !r.done || r.tokens[0] != 10 {
				t.Fatalf("stream incomplete: %+v", r)
			}
			var gap time.Duration
			for i := 1; i < len(r.tokTimes); i++ {
				gap = max(gap, r.tokTimes[i].Sub(r.tokTimes[i-1]))
			}
			if gap < 250*time.Millisecond {
				t.Errorf("largest gap between tokens %v, want a stall of about 300ms", gap)
			}
			if s.Stats().Stalls != 1 {
				t.Errorf("stats %+v", s.Stats())
			}
		}},
		{"disconnect stream", Faults{DisconnectRate: 1}, true, func(t *testing.T, s *Server, status int, _ map[string][]string, body io.Reader) {
			evs, err := readSSE(t, body)
			if err == nil {
				t.Fatalf("stream of %d events ended cleanly, want a dropped connection", len(evs))
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Logf("read error: %v", err)
			}
			for _, ev := range evs {
				if string(ev.data) == "[DONE]" {
					t.Fatal("got [DONE] despite disconnect")
				}
			}
			if s.Stats().Disconnects != 1 {
				t.Errorf("stats %+v", s.Stats())
			}
		}},
		{"disconnect non-stream", Faults{DisconnectRate: 1}, false, func(t *testing.T, s *Server, status int, _ map[string][]string, body io.Reader) {
			t.Fatal("got a response despite disconnect")
		}},
		{"malformed stream", Faults{MalformedRate: 1}, true, func(t *testing.T, s *Server, status int, _ map[string][]string, body io.Reader) {
			evs, err := readSSE(t, body)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, ev := range evs {
				if ev.err != nil {
					bad++
				}
			}
			if bad != 1 || string(evs[len(evs)-1].data) != "[DONE]" {
				t.Fatalf("%d malformed lines of %d, want 1 and a [DONE]", bad, len(evs))
			}
			if st := s.Stats(); st.Malformed != 1 || st.Completed != 1 || st.CompletedClean != 0 {
				t.Errorf("stats %+v, want 1 malformed, 1 completed, 0 clean", st)
			}
		}},
		{"malformed body", Faults{MalformedRate: 1}, false, func(t *testing.T, s *Server, status int, _ map[string][]string, body io.Reader) {
			b, _ := io.ReadAll(body)
			var m map[string]any
			if status != 200 || json.Unmarshal(b, &m) == nil {
				t.Fatalf("status %d body %q: want 200 with invalid JSON", status, b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ts := newTestServer(t, Config{Seed: 9, Faults: tt.faults})
			body, _ := json.Marshal(chatBody(tt.stream, 10, "x"))
			resp, err := ts.Client().Post(ts.URL+"/v1/chat/completions", "application/json", bytesReader(body))
			if err != nil {
				if tt.faults.DisconnectRate == 1 && !tt.stream {
					if s.Stats().Disconnects != 1 {
						t.Errorf("stats %+v", s.Stats())
					}
					return
				}
				t.Fatal(err)
			}
			defer resp.Body.Close()
			tt.check(t, s, resp.StatusCode, resp.Header, resp.Body)
		})
	}
}

func TestFaultRatesDeterministic(t *testing.T) {
	t.Parallel()
	statuses := func() []int {
		_, ts := newTestServer(t, Config{Seed: 5, Faults: Faults{ErrorRate: 0.3, RateLimitRate: 0.2}})
		var out []int
		for range 40 {
			resp := post(t, ts.URL+"/v1/completions", map[string]any{"prompt": "p", "max_tokens": 1})
			_, _ = io.Copy(io.Discard, resp.Body)
			out = append(out, resp.StatusCode)
		}
		return out
	}
	a, b := statuses(), statuses()
	count := map[int]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different fault sequence:\n%v\n%v", a, b)
		}
		count[a[i]]++
	}
	// 40 draws at 30% and 20%×70%: all three outcomes occur.
	if count[200] == 0 || count[500] == 0 || count[429] == 0 {
		t.Errorf("status counts %v", count)
	}
}

// TestErrorBurst: each injected error starts a burst of ErrorBurst failing
// requests; requests after the burst succeed again.
func TestErrorBurst(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{Faults: Faults{FailEvery: 10, ErrorBurst: 3, ErrorStatus: 503}})
	var failed []int
	for i := 1; i <= 25; i++ {
		resp := post(t, ts.URL+"/v1/chat/completions", chatBody(false, 1, "x"))
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode == 503 {
			failed = append(failed, i)
		} else if resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	if want := []int{10, 11, 12, 20, 21, 22}; !slices.Equal(failed, want) {
		t.Errorf("failed requests %v, want %v", failed, want)
	}
	if st := s.Stats(); st.InjectedErrors != 6 || st.ErrorBursts != 2 || st.Completed != 19 {
		t.Errorf("stats %+v, want 6 injected errors in 2 bursts, 19 completed", st)
	}
}

// TestStatsEndpoint: GET /sim/stats serves the same counters as Stats().
func TestStatsEndpoint(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{Faults: Faults{FailEvery: 2, RateLimitRate: 0}})
	for range 3 {
		resp := post(t, ts.URL+"/v1/chat/completions", chatBody(true, 3, "x"))
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	resp, err := ts.Client().Get(ts.URL + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	var got Stats
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := s.Stats(); got != want || got.Requests != 3 || got.InjectedErrors != 1 || got.Completed != 2 || got.CompletedClean != 2 {
		t.Errorf("/sim/stats %+v, Stats() %+v; want 3 requests, 1 error, 2 completed", got, want)
	}
	resp = post(t, ts.URL+"/sim/stats", map[string]any{})
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 405 {
		t.Errorf("POST /sim/stats: status %d, want 405", resp.StatusCode)
	}
}
