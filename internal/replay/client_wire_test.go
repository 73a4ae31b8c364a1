package replay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/replay/openai"
)

// TestClientTransportChoice: completion requests go through httpwire
// unless a proxy applies or a header is one it refuses; either way the
// request arrives with the same headers and the answer is read alike.
func TestClientTransportChoice(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"content":"hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name     string
		url      string
		proxy    string
		headers  http.Header
		session  http.Header
		wantWire bool
	}{
		{name: "plain", url: srv.URL, wantWire: true},
		{name: "session header", url: srv.URL, session: http.Header{"X-Session-Id": {"s1"}}, wantWire: true},
		{name: "reserved header", url: srv.URL, headers: http.Header{"Connection": {"close"}}},
		{name: "reserved session header", url: srv.URL, session: http.Header{"Keep-Alive": {"timeout=5"}}},
		// Loopback is never proxied, so the proxied case is only checked
		// for the choice, not sent.
		{name: "proxy", url: "http://10.0.0.1:8000", proxy: "http://127.0.0.1:9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HTTP_PROXY", tc.proxy)
			t.Setenv("NO_PROXY", "")
			h := http.Header{"X-Extra": {"v"}}
			for k, v := range tc.headers {
				h[k] = v
			}
			c := newClient(&Options{URL: tc.url, APIKey: "sk-secret", Headers: h, API: openai.APIChat}, 4)
			defer c.close()
			if _, wire := c.wireFor(tc.session); wire != tc.wantWire {
				t.Fatalf("wire client chosen: %v, want %v", wire, tc.wantWire)
			}
			if tc.proxy != "" {
				return
			}
			got = nil
			a := c.do(context.Background(), []byte(`{"model":"m"}`), tc.session, 10*time.Second, 0)
			if a.Err != nil || a.Status != 200 {
				t.Fatalf("attempt: status %d, %v", a.Status, a.Err)
			}
			if s := string(a.Resp.Choices[0].Content); s != "hi there" {
				t.Errorf("content %q", s)
			}
			for k, want := range map[string]string{"Authorization": "Bearer sk-secret", "Content-Type": "application/json",
				"X-Extra": "v", "User-Agent": "Go-http-client/1.1", "X-Session-Id": tc.session.Get("X-Session-Id")} {
				if g := got.Get(k); g != want {
					t.Errorf("header %s: %q, want %q", k, g, want)
				}
			}
		})
	}
}
