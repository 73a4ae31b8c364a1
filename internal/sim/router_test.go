package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRouter: a session's requests stay on one replica unless the router
// breaks affinity on purpose, which it counts; the session token sends a
// request to the replica it names; requests without a session go
// round-robin; every response names its replica.
func TestRouter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		breakRate float64
	}{{"sticky", 0}, {"breaking", 0.3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, err := Start(context.Background(), Config{Replicas: 4, AffinityBreak: tc.breakRate, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			send := func(hdr map[string]string) (backend, token string) {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				return resp.Header.Get(BackendHeader), resp.Header.Get(SessionTokenHeader)
			}
			// Round-robin without a session.
			var rr []string
			for range 4 {
				b, _ := send(nil)
				rr = append(rr, b)
			}
			if strings.Join(rr, ",") != "replica-0,replica-1,replica-2,replica-3" {
				t.Errorf("round-robin went to %v", rr)
			}
			// By id: count the requests away from the session's usual replica.
			const n = 400
			seen := map[string]int{}
			for range n {
				b, _ := send(map[string]string{SessionHeader: "conv-42"})
				seen[b]++
			}
			home, most := "", 0
			for b, c := range seen {
				if c > most {
					home, most = b, c
				}
			}
			st := srv.Router.Stats()
			if st.SessionRequests != n || int(st.Moved) != n-most {
				t.Errorf("stats %+v; %d of %d requests left %s", st, n-most, n, home)
			}
			if tc.breakRate == 0 && len(seen) != 1 {
				t.Errorf("sticky router spread one session over %v", seen)
			}
			if share := float64(st.Moved) / n; tc.breakRate > 0 && (share < 0.2 || share > 0.4) {
				t.Errorf("moved share %.2f, configured %.2f", share, tc.breakRate)
			}
			// By token: the replica the token names, over the id's.
			_, tok := send(map[string]string{"X-Other": "1"}) // round-robin: replica-0
			if tc.breakRate == 0 {
				if b, _ := send(map[string]string{SessionTokenHeader: tok, SessionHeader: "conv-42"}); b != "replica-0" {
					t.Errorf("token of replica-0 routed to %s", b)
				}
			}
			if len(st.Replicas) != 4 {
				t.Errorf("%d replica stats", len(st.Replicas))
			}
			// Each replica's own /metrics counts its own requests.
			for i, rs := range srv.Router.Stats().Replicas {
				resp, err := http.Get(srv.URL + "/replica/" + strconv.Itoa(i) + "/metrics")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := fmt.Sprintf("vllm:prompt_tokens_total{engine=\"0\",model_name=%q} %d", DefaultModel, rs.PromptTokens)
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
					t.Errorf("replica %d /metrics: status %d, no %q in\n%s", i, resp.StatusCode, want, body)
				}
			}
			if resp, err := http.Get(srv.URL + "/replica/9/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
				t.Errorf("replica 9: %v %v", resp, err)
			}
		})
	}
}
