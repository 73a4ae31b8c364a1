package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/source"
)

// seenRequest is one completion request as the fake server received it.
type seenRequest struct {
	N       int // 1-based arrival number
	At      time.Time
	Path    string
	Header  http.Header
	Raw     []byte
	Body    map[string]any
	Msgs    []conv.Message // chat messages as sent
	Answers []string       // what the server answered, per choice ("" if it failed)
}

// lastUser is the content of the request's last user message.
func (s *seenRequest) lastUser() string {
	for i := len(s.Msgs) - 1; i >= 0; i-- {
		if s.Msgs[i].Role == conv.RoleUser {
			return s.Msgs[i].Content
		}
	}
	return ""
}

// fakeServer is an OpenAI-compatible test server that records what it
// receives. Its default answer to request N is "answer-N" (with n > 1,
// "answer-N.c" for choice c), streamed one word per chunk.
type fakeServer struct {
	*httptest.Server
	// hook, when set, may handle request n itself (return true).
	hook func(w http.ResponseWriter, r *http.Request, req *seenRequest) bool
	// tokenDelay is the pause before each streamed token.
	tokenDelay time.Duration
	// words is the number of words of an answer (default 3).
	words int
	// maxModelLen is reported by /v1/models (0: not reported).
	maxModelLen int

	n                 atomic.Int64
	inflight, maxInfl atomic.Int64
	mu                sync.Mutex
	reqs              []*seenRequest
}

func newFakeServer(t *testing.T, configure func(*fakeServer)) *fakeServer {
	t.Helper()
	fs := &fakeServer{words: 3}
	if configure != nil {
		configure(fs)
	}
	fs.Server = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.Close)
	return fs
}

// pipeNet is an in-memory network for a run on synctest's clock: the
// fake server listens on it and the replay dials it (Options.dial). On a
// loopback socket a goroutine blocked in a read is not durably blocked,
// so the bubble's clock would never move; on net.Pipe it is.
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeNet() *pipeNet {
	return &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the server end of the next dialled connection.
func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// Addr is an address the replay never dials (Options.dial does): a run
// that would open a real connection is refused instead.
func (p *pipeNet) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9} }

// dial connects to the server end that Accept hands out.
func (p *pipeNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case p.conns <- s:
		return c, nil
	case <-p.done:
	case <-ctx.Done():
	}
	c.Close()
	s.Close()
	return nil, net.ErrClosed
}

// newPipeServer is newFakeServer on a pipeNet, for a test inside
// synctest.Test: its handler's pauses (tokenDelay) and the replay's
// waits are all on the bubble's clock. Give the returned dial to
// Options.dial.
func newPipeServer(t *testing.T, configure func(*fakeServer)) (*fakeServer, func(context.Context, string, string) (net.Conn, error)) {
	t.Helper()
	fs := &fakeServer{words: 3}
	if configure != nil {
		configure(fs)
	}
	pn := newPipeNet()
	fs.Server = &httptest.Server{Listener: pn, Config: &http.Server{Handler: http.HandlerFunc(fs.serve)}}
	fs.Start()
	t.Cleanup(fs.Close)
	return fs, pn.dial
}

// requests returns the completion requests received so far, in arrival order.
func (fs *fakeServer) requests() []*seenRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := slices.Clone(fs.reqs)
	slices.SortFunc(out, func(a, b *seenRequest) int { return a.N - b.N })
	return out
}

func (fs *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/models") {
		m := map[string]any{"id": "fake-model", "object": "model"}
		if fs.maxModelLen > 0 {
			m["max_model_len"] = fs.maxModelLen
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{m}})
		return
	}
	cur := fs.inflight.Add(1)
	defer fs.inflight.Add(-1)
	for {
		m := fs.maxInfl.Load()
		if cur <= m || fs.maxInfl.CompareAndSwap(m, cur) {
			break
		}
	}
	var raw bytes.Buffer
	raw.ReadFrom(r.Body)
	req := &seenRequest{N: int(fs.n.Add(1)), At: time.Now(), Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw.Bytes()}
	if err := json.Unmarshal(req.Raw, &req.Body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if msgs, ok := req.Body["messages"]; ok {
		b, _ := json.Marshal(msgs)
		json.Unmarshal(b, &req.Msgs)
	}
	fs.mu.Lock()
	fs.reqs = append(fs.reqs, req)
	fs.mu.Unlock()
	if fs.hook != nil && fs.hook(w, r, req) {
		return
	}
	fs.answer(w, r, req)
}

// answer writes the default answer, streamed or not.
func (fs *fakeServer) answer(w http.ResponseWriter, r *http.Request, req *seenRequest) {
	n := 1
	if v, ok := req.Body["n"].(float64); ok {
		n = int(v)
	}
	completions := strings.HasSuffix(req.Path, "/completions") && !strings.HasSuffix(req.Path, "/chat/completions")
	answers := make([][]string, n)
	full := make([]string, n)
	for c := range answers {
		tag := fmt.Sprintf("answer-%d", req.N)
		if n > 1 {
			tag = fmt.Sprintf("answer-%d.%d", req.N, c)
		}
		words := []string{tag}
		for i := 1; i < fs.words; i++ {
			words = append(words, fmt.Sprintf(" w%d", i))
		}
		answers[c] = words
		full[c] = strings.Join(words, "")
	}
	fs.mu.Lock()
	req.Answers = full
	fs.mu.Unlock()
	promptTokens := len(strings.Fields(string(req.Raw)))
	usage := map[string]any{"prompt_tokens": promptTokens, "completion_tokens": n * fs.words, "total_tokens": promptTokens + n*fs.words}
	stream, _ := req.Body["stream"].(bool)
	if !stream {
		var choices []any
		for c := range n {
			ch := map[string]any{"index": c, "finish_reason": "stop"}
			if completions {
				ch["text"] = full[c]
			} else {
				ch["message"] = map[string]any{"role": "assistant", "content": full[c]}
			}
			choices = append(choices, ch)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "choices": choices, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for i := range fs.words {
		if fs.tokenDelay > 0 {
			select {
			case <-time.After(fs.tokenDelay):
			case <-r.Context().Done():
				return
			}
		}
		for c := range n {
			ch := map[string]any{"index": c}
			if completions {
				ch["text"] = answers[c][i]
			} else {
				ch["delta"] = map[string]any{"content": answers[c][i]}
			}
			if i == fs.words-1 {
				ch["finish_reason"] = "stop"
			}
			if !send(map[string]any{"choices": []any{ch}}) {
				return
			}
		}
	}
	if so, ok := req.Body["stream_options"].(map[string]any); ok && so["include_usage"] == true {
		send(map[string]any{"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// startStream begins an SSE response with one event carrying data and
// flushes it, for hooks that then stall, break or cut the stream.
func startStream(w http.ResponseWriter, data string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\n\n", data)
	http.NewResponseController(w).Flush()
}

// memRecords collects records; safe for concurrent use.
type memRecords struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (m *memRecords) Encode(r *record.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := *r
	m.recs = append(m.recs, &cp)
	return nil
}

func (m *memRecords) Flush() error { return nil }
func (m *memRecords) Close() error { return nil }

func (m *memRecords) all() []*record.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.recs)
}

// result is what a test replay produced.
type result struct {
	sum   *Summary
	recs  []*record.Record
	convs []conv.Conversation
	log   string
}

// replayT runs a replay with test defaults (fast retries, a model name)
// and fails the test on a run error.
func replayT(t *testing.T, o Options, convs []conv.Conversation) *result {
	t.Helper()
	res, err := replayE(context.Background(), context.Background(), o, convs)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func replayE(stop, abort context.Context, o Options, convs []conv.Conversation) (*result, error) {
	if o.Model == "" {
		o.Model = "fake-model"
	}
	if o.RetryBase == 0 {
		o.RetryBase = time.Millisecond
	}
	if o.RetryMax == 0 {
		o.RetryMax = 5 * time.Millisecond
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 20 * time.Second
	}
	recs := &memRecords{}
	var out, log bytes.Buffer
	sum, err := Run(stop, abort, o, source.Slice(convs), Sink{Records: recs, Conversations: conv.NewWriter(&out), Log: &log})
	res := &result{sum: sum, recs: recs.all(), log: log.String()}
	// Decoded line by line rather than with conv.Reader, which refuses
	// inputs a replay cannot use (e.g. no user message) that a replay of
	// such a conversation given in code still writes back.
	dec := json.NewDecoder(&out)
	for dec.More() {
		var c conv.Conversation
		rerr := dec.Decode(&c)
		if rerr == nil {
			rerr = c.Validate()
		}
		if rerr != nil {
			if err == nil {
				err = fmt.Errorf("conversations output: %w", rerr)
			}
			break
		}
		res.convs = append(res.convs, c)
	}
	return res, err
}

// final returns the final attempt of each request (choice 0), in seq order.
func (res *result) final() []*record.Record {
	var out []*record.Record
	for _, r := range res.recs {
		if r.Choice == 0 && !r.Retried {
			out = append(out, r)
		}
	}
	return out
}

// byConv groups final choice-0 records by conversation id, by turn.
func (res *result) byConv() map[string][]*record.Record {
	m := map[string][]*record.Record{}
	for _, r := range res.final() {
		m[r.ConversationID] = append(m[r.ConversationID], r)
	}
	for _, rs := range m {
		slices.SortFunc(rs, func(a, b *record.Record) int { return a.Turn - b.Turn })
	}
	return m
}

// conversation builds a conversation from alternating role:content pairs;
// "u:" is user, "a:" assistant, "s:" system.
func conversation(id string, msgs ...string) conv.Conversation {
	c := conv.Conversation{ID: id}
	for _, m := range msgs {
		role, content, _ := strings.Cut(m, ":")
		switch role {
		case "u":
			role = conv.RoleUser
		case "a":
			role = conv.RoleAssistant
		case "s":
			role = conv.RoleSystem
		}
		c.Messages = append(c.Messages, conv.Message{Role: role, Content: content})
	}
	return c
}

// simpleConvs returns n conversations of turns user turns each, with
// dataset answers "dataset-ID-K".
func simpleConvs(n, turns int) []conv.Conversation {
	var out []conv.Conversation
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		var msgs []string
		for k := range turns {
			msgs = append(msgs, fmt.Sprintf("u:%s user %d", id, k), fmt.Sprintf("a:dataset-%s-%d", id, k))
		}
		out = append(out, conversation(id, msgs...))
	}
	return out
}

// checkSeq checks that records are numbered 0..n-1 in emission order.
func checkSeq(t *testing.T, recs []*record.Record, first int64) {
	t.Helper()
	for i, r := range recs {
		if r.Seq != first+int64(i) {
			t.Fatalf("record %d has seq %d, want %d", i, r.Seq, first+int64(i))
		}
	}
}
