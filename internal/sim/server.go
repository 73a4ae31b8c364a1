package sim

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mtkit/mtkit/internal/tokenize"
)

// maxBodyBytes caps request bodies.
const maxBodyBytes = 64 << 20

// Server is the simulated OpenAI-compatible server, an http.Handler.
type Server struct {
	cfg    Config
	vocab  *vocab
	cache  *prefixCache
	adm    admission
	segs   segmentCache
	valid  atomic.Uint64 // valid completion requests so far (fault sequence)
	burst  atomic.Uint64 // last sequence number of the current error burst
	ctr    counters
	models []byte
	clk    clock
}

// counters are the live Stats counters.
type counters struct {
	requests, completed, rejected, injected, rateLimited atomic.Uint64
	bursts, clean                                        atomic.Uint64
	stalls, disconnects, malformed, canceled             atomic.Uint64
	promptTokens, cachedTokens, completionTokens, chunks atomic.Uint64
	localHits, externalQueries, externalHits             atomic.Uint64
	toolCalls                                            atomic.Uint64
}

// Stats is a snapshot of what a Server has done. GET /sim/stats serves it
// as JSON.
type Stats struct {
	Requests         uint64 `json:"requests"`          // completion requests received
	Completed        uint64 `json:"completed"`         // responses sent in full
	CompletedClean   uint64 `json:"completed_clean"`   // of which without an injected malformed line
	Rejected         uint64 `json:"rejected"`          // invalid requests answered 4xx (auth, validation, context length)
	InjectedErrors   uint64 `json:"injected_errors"`   // Faults.ErrorRate, Faults.FailEvery and burst errors
	ErrorBursts      uint64 `json:"error_bursts"`      // bursts of Faults.ErrorBurst errors started
	RateLimited      uint64 `json:"rate_limited"`      // injected 429 responses
	Stalls           uint64 `json:"stalls"`            // injected stalls
	Disconnects      uint64 `json:"disconnects"`       // injected dropped connections
	Malformed        uint64 `json:"malformed"`         // injected malformed lines or bodies
	Canceled         uint64 `json:"canceled"`          // requests whose client went away first
	Queued           uint64 `json:"queued"`            // requests that waited for MaxRunning
	PromptTokens     uint64 `json:"prompt_tokens"`     // prompt tokens of admitted requests
	CachedTokens     uint64 `json:"cached_tokens"`     // of which served from the prefix cache (both tiers)
	LocalHitTokens   uint64 `json:"local_hit_tokens"`  // of which found in the local tier
	ExternalQueries  uint64 `json:"external_queries"`  // tokens looked up in the offload tier (prompt − local hits)
	ExternalHits     uint64 `json:"external_hits"`     // tokens found in the offload tier
	CompletionTokens uint64 `json:"completion_tokens"` // output tokens sent (all choices)
	Chunks           uint64 `json:"chunks"`            // SSE data lines written, [DONE] included
	Running          int    `json:"running"`           // sequences running now
	Waiting          int    `json:"waiting"`           // requests waiting now
	CacheBlocks      int    `json:"cache_blocks"`      // blocks in the local tier now
	CacheEvictions   uint64 `json:"cache_evictions"`   // blocks evicted from the local tier so far (to the offload tier, if any)
	OffloadBlocks    int    `json:"offload_blocks"`    // blocks in the offload tier now
	OffloadEvictions uint64 `json:"offload_evictions"` // blocks dropped from the offload tier so far
	ToolCalls        uint64 `json:"tool_calls"`        // answers planned as a tool call (all choices)
}

// New returns a Server for cfg, with defaults applied to zero fields.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Tokenizer == nil {
		if cfg.Tokenizer, err = tokenize.Load(""); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	v, err := newVocab(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, vocab: v, cache: newPrefixCache(cfg.CacheTokens/cfg.BlockSize, cfg.OffloadTokens/cfg.BlockSize), clk: realClock{}}
	s.adm.limit = cfg.MaxRunning
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		Root        string `json:"root"`
		MaxModelLen int    `json:"max_model_len"`
	}
	s.models, err = json.Marshal(struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{cfg.Model, "model", 0, "mtkit", cfg.Model, cfg.MaxModelLen}}})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return s, nil
}

// Config returns the server's configuration with defaults applied.
func (s *Server) Config() Config { return s.cfg }

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	cs := s.cache.size()
	c := &s.ctr
	return Stats{
		Requests: c.requests.Load(), Completed: c.completed.Load(), CompletedClean: c.clean.Load(), Rejected: c.rejected.Load(),
		InjectedErrors: c.injected.Load(), ErrorBursts: c.bursts.Load(), RateLimited: c.rateLimited.Load(), Stalls: c.stalls.Load(),
		Disconnects: c.disconnects.Load(), Malformed: c.malformed.Load(), Canceled: c.canceled.Load(),
		Queued: s.adm.waited.Load(), PromptTokens: c.promptTokens.Load(), CachedTokens: c.cachedTokens.Load(),
		LocalHitTokens: c.localHits.Load(), ExternalQueries: c.externalQueries.Load(), ExternalHits: c.externalHits.Load(),
		CompletionTokens: c.completionTokens.Load(), Chunks: c.chunks.Load(),
		Running: int(s.adm.running.Load()), Waiting: int(s.adm.queued.Load()),
		CacheBlocks: cs.blocks, CacheEvictions: cs.evictions, OffloadBlocks: cs.offloadBlocks, OffloadEvictions: cs.offloadEvictions,
		ToolCalls: c.toolCalls.Load(),
	}
}

// ServeHTTP serves GET /v1/models, POST /v1/chat/completions, POST
// /v1/completions (also without the /v1 prefix) and GET /health.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch path {
	case "/health", "/healthz":
		w.WriteHeader(http.StatusOK)
		return
	case "/sim/stats":
		s.serveStats(w, r)
		return
	case "/metrics":
		s.serveMetrics(w, r) // metrics.go
		return
	case "/v1/models", "/models", "/v1/chat/completions", "/chat/completions", "/v1/completions", "/completions":
	default:
		writeError(w, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "not_found",
			message: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)})
		return
	}
	if !s.authorized(r) {
		s.ctr.rejected.Add(1)
		writeError(w, &apiError{status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key",
			message: "missing or incorrect API key in the Authorization header (want Bearer KEY)"})
		return
	}
	want := http.MethodPost
	if strings.HasSuffix(path, "/models") {
		want = http.MethodGet
	}
	if r.Method != want && !(want == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", want)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: fmt.Sprintf("%s %s: method not allowed, use %s", r.Method, r.URL.Path, want)})
		return
	}
	switch {
	case strings.HasSuffix(path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.models)
	case strings.HasSuffix(path, "/chat/completions"):
		s.complete(w, r, chatEndpoint)
	default:
		s.complete(w, r, completionsEndpoint)
	}
}

// serveStats answers GET /sim/stats with Stats as JSON, so that a soak or a
// benchmark can read the server's own counts of requests and faults.
func (s *Server) serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: fmt.Sprintf("%s %s: method not allowed, use GET", r.Method, r.URL.Path)})
		return
	}
	b, err := json.Marshal(s.Stats())
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, typ: "server_error", code: "internal_error", message: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.APIKey)) == 1
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, e *apiError) {
	type errorObject struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
	}
	body := struct {
		Error errorObject `json:"error"`
	}{errorObject{e.message, e.typ, nilIfEmpty(e.param), nilIfEmpty(e.code)}}
	b, _ := json.Marshal(body) // strings only: cannot fail to encode
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(append(b, '\n'))
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// choicePlan is the output of one choice.
type choicePlan struct {
	reasoning span
	content   span
	finish    string
	// tool, when set, names the function the answer calls: its content
	// tokens are then the call's arguments, {"input": "TEXT"}.
	tool   string
	callID string
}

func (c *choicePlan) len() int { return c.reasoning.n + c.content.n }

// plan is everything decided about a request before it runs.
type plan struct {
	req          *request
	id           string
	created      int64
	prompt       []int
	choices      []choicePlan
	maxLen       int
	stallAt      int // token index before which the stream stalls, -1 none
	disconnectAt int // token index before which the connection drops, -1 none
	malformedAt  int // token index before which a malformed line goes, -1 none
}

// complete serves a chat or completions request.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, kind endpoint) {
	s.ctr.requests.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		s.ctr.rejected.Add(1)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large",
				message: fmt.Sprintf("request body over %d bytes", mbe.Limit)})
			return
		}
		writeError(w, badRequest("invalid_body", "", "reading request body: %v", err))
		return
	}
	req, aerr := parseRequest(kind, body, s.cfg.Model, s.cfg.MaxRunning)
	if aerr != nil {
		s.ctr.rejected.Add(1)
		writeError(w, aerr)
		return
	}
	if req.conversationID == "" {
		req.conversationID = r.Header.Get("X-Session-ID")
	}
	p, aerr := s.plan(req)
	if aerr != nil {
		s.ctr.rejected.Add(1)
		writeError(w, aerr)
		return
	}
	seq := s.valid.Add(1)
	frng := rand.New(rand.NewPCG(mix64(uint64(s.cfg.Seed)), seq))
	f := s.cfg.Faults
	// Draw every number in a fixed order so that changing one rate does
	// not reshuffle the others.
	uErr, uRate, uStall, uDisc, uMal := frng.Float64(), frng.Float64(), frng.Float64(), frng.Float64(), frng.Float64()
	stallPos, discPos, malPos := frng.IntN(p.maxLen), frng.IntN(p.maxLen), frng.IntN(p.maxLen+1)
	p.id = s.responseID(kind, seq)
	switch {
	case f.FailEvery > 0 && seq%uint64(f.FailEvery) == 0, uErr < f.ErrorRate, seq <= s.burst.Load():
		s.ctr.injected.Add(1)
		s.startBurst(seq)
		msg := fmt.Sprintf("simulated failure of request %d (HTTP %d)", seq, f.ErrorStatus)
		if f.EchoSecrets {
			msg += "; request headers: " + echoHeaders(r)
		}
		writeError(w, &apiError{status: f.ErrorStatus, typ: errorType(f.ErrorStatus), code: "simulated_error", message: msg})
		return
	case uRate < f.RateLimitRate:
		s.ctr.rateLimited.Add(1)
		ra := f.RetryAfter
		w.Header().Set("Retry-After", strconv.FormatInt(int64((ra+time.Second-1)/time.Second), 10))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(ra.Milliseconds(), 10))
		writeError(w, &apiError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded",
			message: fmt.Sprintf("simulated rate limit on request %d; retry after %v", seq, ra)})
		return
	}
	p.stallAt, p.disconnectAt, p.malformedAt = -1, -1, -1
	if uStall < f.StallRate {
		p.stallAt = stallPos
		if p.maxLen > 1 && p.stallAt == 0 {
			p.stallAt = 1 // between the first and the last token
		}
	}
	if uDisc < f.DisconnectRate {
		p.disconnectAt = discPos
	}
	if uMal < f.MalformedRate {
		p.malformedAt = malPos
	}
	s.run(w, r, p)
}

// startBurst makes the errored request seq the first of a burst of
// Faults.ErrorBurst when no burst is under way.
func (s *Server) startBurst(seq uint64) {
	n := uint64(s.cfg.Faults.ErrorBurst)
	if n <= 1 {
		return
	}
	for {
		last := s.burst.Load()
		if seq <= last {
			return // inside a burst already
		}
		if s.burst.CompareAndSwap(last, seq+n-1) {
			s.ctr.bursts.Add(1)
			return
		}
	}
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

func (s *Server) responseID(kind endpoint, seq uint64) string {
	prefix := "chatcmpl-"
	if kind == completionsEndpoint {
		prefix = "cmpl-"
	}
	return prefix + fmt.Sprintf("%016x", mix64(uint64(s.cfg.Seed)^(seq*0x9e3779b97f4a7c15)))
}

// plan tokenizes the prompt, checks the context length and draws the
// output of each choice.
func (s *Server) plan(req *request) (*plan, *apiError) {
	p := &plan{req: req, created: time.Now().Unix()}
	if req.promptIDs != nil {
		p.prompt = req.promptIDs
	} else {
		for _, seg := range req.segments {
			p.prompt = append(p.prompt, s.segs.ids(s.cfg.Tokenizer, seg)...)
		}
	}
	if len(p.prompt) == 0 {
		return nil, badRequest("invalid_value", "prompt", "prompt has no tokens")
	}
	maxLen := s.cfg.MaxModelLen
	room := maxLen - len(p.prompt)
	if room < 1 || (req.maxTokens > 0 && req.maxTokens > room) {
		out := req.maxTokens
		if out == 0 {
			out = 1
		}
		return nil, badRequest("context_length_exceeded", "messages",
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			maxLen, len(p.prompt)+out, len(p.prompt), out)
	}
	textKey := hashIDs(p.prompt)
	if req.seed != nil {
		textKey = mix64(uint64(*req.seed) ^ 0x5851f42d4c957f2d)
	}
	p.choices = make([]choicePlan, req.n)
	for c := range p.choices {
		rng := rand.New(rand.NewPCG(mix64(uint64(s.cfg.Seed)^textKey), uint64(c)))
		n, finish := req.maxTokens, "length"
		if n == 0 {
			limit := min(s.cfg.DefaultMaxTokens, room)
			lo := min(max(1, req.minTokens), limit)
			n = lo + rng.IntN(limit-lo+1)
			finish = "stop"
			if req.ignoreEOS {
				n, finish = limit, "length"
			}
		}
		r := 0
		if req.kind == chatEndpoint {
			r = min(s.cfg.ReasoningTokens, n)
		}
		cp := &p.choices[c]
		cp.reasoning = s.vocab.span(rng, r)
		cp.content = s.vocab.span(rng, n-r)
		cp.finish = finish
		if name := s.toolCall(req, rng); name != "" && cp.content.n > 0 {
			cp.tool, cp.callID = name, fmt.Sprintf("call_%016x", rng.Uint64())
			if cp.finish == "stop" {
				cp.finish = "tool_calls"
			}
			s.ctr.toolCalls.Add(1)
		}
		p.maxLen = max(p.maxLen, n)
	}
	return p, nil
}

// toolCall returns the function a chat answer calls, "" for a plain
// answer. Draws come after the text's, so a request without tools gets the
// same text as before tools existed.
func (s *Server) toolCall(req *request, rng *rand.Rand) string {
	switch req.toolChoice {
	case "function":
		return req.toolName
	case "required":
		return req.tools[rng.IntN(len(req.tools))]
	case "auto":
		if s.cfg.ToolCallRate > 0 && rng.Float64() < s.cfg.ToolCallRate {
			return req.tools[rng.IntN(len(req.tools))]
		}
	}
	return ""
}

// toolArguments is the arguments text of a tool call whose content is
// text, and its parts: the head before the text and the tail after it.
const (
	toolArgsHead = `{"input": "`
	toolArgsTail = `"}`
)

// hashIDs hashes a token sequence.
func hashIDs(ids []int) uint64 {
	h := uint64(len(ids))
	for _, t := range ids {
		h = (h ^ uint64(uint32(t))) * 0x100000001b3
	}
	return mix64(h)
}

// interval returns the current decode time per token.
func (s *Server) interval() time.Duration {
	d := s.cfg.DecodePerToken
	if d == 0 || s.cfg.DecodeSlowdownPerSeq == 0 {
		return d
	}
	extra := s.adm.running.Load() - 1
	if extra <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + s.cfg.DecodeSlowdownPerSeq*float64(extra)))
}

// run admits the request, models its timing and writes the response.
func (s *Server) run(w http.ResponseWriter, r *http.Request, p *plan) {
	ctx := r.Context()
	req := p.req
	var sw *streamWriter
	if req.stream {
		sw = newStreamWriter(w, p, s.vocab, s.cfg.Model, s.clk)
		if sw.start() != nil {
			s.ctr.canceled.Add(1)
			return
		}
	}
	n := len(p.choices)
	if err := s.adm.acquire(ctx, n); err != nil {
		s.ctr.canceled.Add(1)
		return
	}
	defer s.adm.release(n)
	start := s.clk.now()

	bs := s.cfg.BlockSize
	hashes := blockHashes(p.prompt, bs)
	local, external := 0, 0
	if s.cache.enabled() {
		// The last prompt token is always computed, as in vLLM.
		matchable := min((len(p.prompt)-1)/bs, len(hashes))
		lb, eb := s.cache.match(hashes[:matchable])
		local, external = lb*bs, eb*bs
	}
	// cached_tokens counts both tiers, as vLLM's num_cached_tokens counts
	// the local and the connector's tokens (see docs/simulator.md).
	cached := local + external
	s.ctr.promptTokens.Add(uint64(len(p.prompt)))
	s.ctr.cachedTokens.Add(uint64(cached))
	s.ctr.localHits.Add(uint64(local))
	if s.cfg.OffloadTokens > 0 {
		s.ctr.externalQueries.Add(uint64(len(p.prompt) - local))
		s.ctr.externalHits.Add(uint64(external))
	}
	shown := cached
	if s.cfg.HideCachedTokens {
		shown = -1
	}
	if sw != nil {
		sw.cached = shown
	}

	sl := s.clk.pacer(s.cfg.Precise)
	defer sl.stop()
	next := start.Add(s.cfg.TTFTBase + s.cfg.PrefillPerToken*time.Duration(len(p.prompt)-cached) +
		s.cfg.OffloadLoadPerToken*time.Duration(external))
	for i := 0; i < p.maxLen; i++ {
		if i > 0 {
			next = next.Add(s.interval())
		}
		if i == p.stallAt {
			s.ctr.stalls.Add(1)
			next = next.Add(s.cfg.Faults.Stall)
		}
		if sl.until(ctx, next) != nil {
			s.ctr.canceled.Add(1)
			return
		}
		if i == 0 {
			s.cache.insert(hashes) // prefill done
			// Decode times are counted from when the first token really
			// goes out, so a late first token does not make the next
			// ones burst; later tokens follow an absolute schedule and
			// do not drift.
			next = s.clk.now()
		}
		if i == p.disconnectAt {
			s.ctr.disconnects.Add(1)
			panic(http.ErrAbortHandler)
		}
		if sw == nil {
			continue
		}
		if i == p.malformedAt {
			s.ctr.malformed.Add(1)
			sw.malformed()
		}
		sw.step(i)
		if sw.err != nil {
			s.ctr.chunks.Add(uint64(sw.chunks))
			s.ctr.canceled.Add(1)
			return
		}
	}
	var out uint64
	for c := range p.choices {
		cp := &p.choices[c]
		out += uint64(cp.len())
		if s.cache.enabled() {
			full := s.vocab.appendIDs(s.vocab.appendIDs(append([]int(nil), p.prompt...), cp.reasoning), cp.content)
			s.cache.insert(blockHashes(full, bs))
		}
	}
	s.ctr.completionTokens.Add(out)
	if sw != nil {
		if p.malformedAt == p.maxLen {
			s.ctr.malformed.Add(1)
			sw.malformed()
		}
		sw.finish()
		s.ctr.chunks.Add(uint64(sw.chunks))
		if sw.err != nil {
			s.ctr.canceled.Add(1)
			return
		}
		s.completed(p)
		return
	}
	body := s.responseBody(p, shown)
	if p.malformedAt >= 0 {
		s.ctr.malformed.Add(1)
		body = body[:len(body)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(body); err != nil {
		s.ctr.canceled.Add(1)
		return
	}
	s.completed(p)
}

// completed counts a response sent in full.
func (s *Server) completed(p *plan) {
	s.ctr.completed.Add(1)
	if p.malformedAt < 0 {
		s.ctr.clean.Add(1)
	}
}

// usage is the OpenAI usage object.
type usage struct {
	PromptTokens            int            `json:"prompt_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	PromptTokensDetails     *promptDetails `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

// promptDetails is usage.prompt_tokens_details.
type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// planUsage returns the usage of p with cached prompt tokens; cached < 0
// leaves prompt_tokens_details out (Config.HideCachedTokens).
func planUsage(p *plan, cached int) usage {
	var u usage
	u.PromptTokens = len(p.prompt)
	reasoning := 0
	for c := range p.choices {
		u.CompletionTokens += p.choices[c].len()
		reasoning += p.choices[c].reasoning.n
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if cached >= 0 {
		u.PromptTokensDetails = &promptDetails{cached}
	}
	if reasoning > 0 {
		u.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{reasoning}
	}
	return u
}

// responseBody renders a non-streaming response.
func (s *Server) responseBody(p *plan, cached int) []byte {
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	type message struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent *string    `json:"reasoning_content,omitempty"`
		ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	}
	type choice struct {
		Index        int      `json:"index"`
		Message      *message `json:"message,omitempty"`
		Text         *string  `json:"text,omitempty"`
		Logprobs     any      `json:"logprobs"`
		FinishReason string   `json:"finish_reason"`
	}
	resp := struct {
		ID        string   `json:"id"`
		Object    string   `json:"object"`
		Created   int64    `json:"created"`
		Model     string   `json:"model"`
		Choices   []choice `json:"choices"`
		Usage     usage    `json:"usage"`
		SimSentNS int64    `json:"sim_sent_ns"`
	}{ID: p.id, Created: p.created, Model: s.cfg.Model, Usage: planUsage(p, cached)}
	resp.Object = "chat.completion"
	if p.req.kind == completionsEndpoint {
		resp.Object = "text_completion"
	}
	for c := range p.choices {
		cp := &p.choices[c]
		ch := choice{Index: c, FinishReason: cp.finish}
		content := s.vocab.text(cp.content)
		if p.req.kind == chatEndpoint {
			m := &message{Role: "assistant", Content: &content}
			if cp.tool != "" {
				// The arguments are the content's text as a JSON string.
				arg := string(jsonString(content))
				m.Content, m.ToolCalls = nil, []toolCall{{ID: cp.callID, Type: "function",
					Function: function{Name: cp.tool, Arguments: toolArgsHead + arg[1:len(arg)-1] + toolArgsTail}}}
			}
			if cp.reasoning.n > 0 {
				rc := s.vocab.text(cp.reasoning)
				m.ReasoningContent = &rc
			}
			ch.Message = m
		} else {
			ch.Text = &content
		}
		resp.Choices = append(resp.Choices, ch)
	}
	resp.SimSentNS = s.clk.now().UnixNano()
	b, _ := json.Marshal(resp) // plain structs of strings and ints cannot fail
	return append(b, '\n')
}

// segmentCache memoizes the token ids of chat template segments, so a
// conversation's history is tokenized once, not on every turn. It keeps
// two generations and drops the older when the newer passes its budget.
type segmentCache struct {
	mu       sync.Mutex
	cur, old map[string][]int
	curBytes int
}

const segmentCacheBytes = 32 << 20

func (c *segmentCache) ids(tok tokenize.Tokenizer, seg string) []int {
	c.mu.Lock()
	if ids, ok := c.cur[seg]; ok {
		c.mu.Unlock()
		return ids
	}
	if ids, ok := c.old[seg]; ok {
		c.putLocked(seg, ids)
		c.mu.Unlock()
		return ids
	}
	c.mu.Unlock()
	ids := tok.Encode(seg)
	c.mu.Lock()
	c.putLocked(seg, ids)
	c.mu.Unlock()
	return ids
}

func (c *segmentCache) putLocked(seg string, ids []int) {
	if c.cur == nil {
		c.cur = make(map[string][]int)
	}
	c.cur[seg] = ids
	c.curBytes += len(seg) + 8*len(ids) + 64
	if c.curBytes > segmentCacheBytes {
		c.old, c.cur, c.curBytes = c.cur, make(map[string][]int), 0
	}
}
