package replay

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/schedule"
)

func TestParseHeaderTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    HeaderTemplate
		wantErr bool
	}{
		{in: "x-session-affinity: {conversation_id}", want: HeaderTemplate{"X-Session-Affinity", "{conversation_id}"}},
		{in: "X-Route:{run_id}/{conversation_id}/u{user}", want: HeaderTemplate{"X-Route", "{run_id}/{conversation_id}/u{user}"}},
		{in: "X-Fixed: pool-a", want: HeaderTemplate{"X-Fixed", "pool-a"}},
		{in: "novalue", wantErr: true},
		{in: "X-Empty:", wantErr: true},
		{in: ": v", wantErr: true},
		{in: "Bad Name: v", wantErr: true},
		{in: "X-A: {session}", wantErr: true},
		{in: "X-A: {conversation_id", wantErr: true},
	} {
		got, err := ParseHeaderTemplate(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseHeaderTemplate(%q) = %+v, %v; want %+v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	tpl := HeaderTemplate{"X-Route", "{run_id}/{conversation_id}/u{user}"}
	if got := tpl.expand("c7", "run1", 3); got != "run1/c7/u3" {
		t.Errorf("expand = %q", got)
	}
}

// TestSessionRouteHeaders: every request carries the session's templated
// headers, and a session sends back the token header and the cookies of
// the response before it (and only its own); the backend header is
// recorded.
func TestSessionRouteHeaders(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, func(fs *fakeServer) {
		fs.hook = func(w http.ResponseWriter, r *http.Request, req *seenRequest) bool {
			key := convKey(req)
			w.Header().Set("X-Router-Token", fmt.Sprintf("tok-%s-%d", key, req.N))
			http.SetCookie(w, &http.Cookie{Name: "llm-d-session", Value: fmt.Sprintf("ck%d", req.N)})
			if req.N%2 == 0 {
				http.SetCookie(w, &http.Cookie{Name: "other", Value: "x"})
			} else {
				http.SetCookie(w, &http.Cookie{Name: "other", MaxAge: -1})
			}
			w.Header().Set("X-Backend", fmt.Sprintf("b%d", req.N%3))
			return false
		}
	})
	o := Options{URL: fs.URL, Stream: true, Schedule: schedule.Closed{Clients: 2}, RunID: "run1",
		SessionHeaders: []HeaderTemplate{{"X-Affinity", "{run_id}:{conversation_id}"}},
		SessionTokens:  []string{"X-Router-Token"}, SessionCookies: true, BackendHeader: "X-Backend"}
	replayT(t, o, simpleConvs(4, 3))
	prev := map[string]*seenRequest{}
	for _, req := range fs.requests() {
		key := convKey(req)
		id, _, _ := strings.Cut(key, " ") // "c0 user 0"
		if got := req.Header.Get("X-Affinity"); got != "run1:"+id {
			t.Errorf("request %d: X-Affinity %q, want run1:%s", req.N, got, id)
		}
		var wantTok, wantCookie string
		if p := prev[key]; p != nil {
			wantTok = fmt.Sprintf("tok-%s-%d", key, p.N)
			wantCookie = fmt.Sprintf("llm-d-session=ck%d", p.N)
			if p.N%2 == 0 {
				wantCookie += "; other=x"
			}
		}
		if got := req.Header.Get("X-Router-Token"); got != wantTok {
			t.Errorf("request %d: token %q, want %q", req.N, got, wantTok)
		}
		if got := req.Header.Get("Cookie"); got != wantCookie {
			t.Errorf("request %d: Cookie %q, want %q", req.N, got, wantCookie)
		}
		prev[key] = req
	}
	if len(prev) != 4 {
		t.Fatalf("%d conversations seen, want 4", len(prev))
	}
}
