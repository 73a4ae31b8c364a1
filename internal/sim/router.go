package sim

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Headers of the simulated router.
const (
	// SessionHeader names a request's session (mtrun --session-id-header).
	SessionHeader = "X-Session-ID"
	// SessionTokenHeader carries the router's session token: set on every
	// response, it routes the requests that send it back to the replica
	// it names (as llm-d's session-affinity scorer's token did).
	SessionTokenHeader = "X-Session-Token"
	// BackendHeader names, on every response, the replica that served it.
	BackendHeader = "X-Sim-Backend"
)

// Router is a simulated session-aware router in front of replicas, each a
// whole simulated server with its own prefix cache and admission. A
// request's session is named by the router's session token, else by the
// X-Session-ID header; a session's requests go to the replica its token
// names, or the one its id hashes to, except a share breakRate of them,
// which the router sends to another replica on purpose (the session's
// home does not change). Requests without a session go round-robin.
type Router struct {
	replicas  []*Server
	breakRate float64

	mu  sync.Mutex
	rng *rand.Rand

	rr                     atomic.Uint64
	sessionRequests, moved atomic.Uint64
}

// RouterStats counts what a Router did.
type RouterStats struct {
	// SessionRequests is the completion requests that named a session.
	SessionRequests uint64 `json:"session_requests"`
	// Moved is those sent away from their session's replica.
	Moved uint64 `json:"moved"`
	// Replicas is each replica's own Stats.
	Replicas []Stats `json:"replicas"`
}

// NewRouter returns a Router over n replicas of cfg that breaks affinity
// on a share breakRate of session requests.
func NewRouter(cfg Config, n int, breakRate float64) (*Router, error) {
	r := &Router{breakRate: breakRate}
	for range n {
		s, err := New(cfg)
		if err != nil {
			return nil, err
		}
		r.replicas = append(r.replicas, s)
	}
	r.rng = rand.New(rand.NewPCG(uint64(r.replicas[0].cfg.Seed), 0x726f75746572))
	return r, nil
}

// Stats returns a snapshot of the router's and the replicas' counters.
func (r *Router) Stats() RouterStats {
	st := RouterStats{SessionRequests: r.sessionRequests.Load(), Moved: r.moved.Load()}
	for _, s := range r.replicas {
		st.Replicas = append(st.Replicas, s.Stats())
	}
	return st
}

// backendName is the name of replica i in the BackendHeader.
func backendName(i int) string { return "replica-" + strconv.Itoa(i) }

// ServeHTTP routes completion requests; /replica/K/PATH reaches replica
// K's own PATH (e.g. its /metrics); other paths are replica 0's, except
// /sim/stats, which serves the RouterStats.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimSuffix(req.URL.Path, "/")
	if path == "/sim/stats" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.Stats())
		return
	}
	if rest, ok := strings.CutPrefix(path, "/replica/"); ok {
		// /replica/K/PATH is replica K's own PATH (its /metrics, say).
		k, sub, _ := strings.Cut(rest, "/")
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(r.replicas) {
			http.NotFound(w, req)
			return
		}
		req2 := req.Clone(req.Context())
		req2.URL.Path = "/" + sub
		r.replicas[i].ServeHTTP(w, req2)
		return
	}
	if !strings.HasSuffix(path, "completions") {
		r.replicas[0].ServeHTTP(w, req)
		return
	}
	i := r.route(req)
	w.Header().Set(BackendHeader, backendName(i))
	w.Header().Set(SessionTokenHeader, base64.StdEncoding.EncodeToString([]byte(backendName(i))))
	r.replicas[i].ServeHTTP(w, req)
}

// route picks the replica of a completion request.
func (r *Router) route(req *http.Request) int {
	n := len(r.replicas)
	home := -1
	if tok := req.Header.Get(SessionTokenHeader); tok != "" {
		if b, err := base64.StdEncoding.DecodeString(tok); err == nil {
			if k, err := strconv.Atoi(strings.TrimPrefix(string(b), "replica-")); err == nil && k >= 0 && k < n {
				home = k
			}
		}
	}
	if id := req.Header.Get(SessionHeader); home < 0 && id != "" {
		h := fnv.New64a()
		h.Write([]byte(id))
		home = int(h.Sum64() % uint64(n))
	}
	if home < 0 {
		return int(r.rr.Add(1)-1) % n
	}
	r.sessionRequests.Add(1)
	if r.breakRate <= 0 || n < 2 {
		return home
	}
	r.mu.Lock()
	moved := r.rng.Float64() < r.breakRate
	other := r.rng.IntN(n - 1)
	r.mu.Unlock()
	if !moved {
		return home
	}
	r.moved.Add(1)
	if other >= home {
		other++
	}
	return other
}
