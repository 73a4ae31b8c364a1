package source

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/jsonl"
	"github.com/mtkit/mtkit/internal/synth"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// The parts of the trace formats (mooncake.go, bailian.go, burstgpt.go,
// azure.go) that they share: the checks of a trace request, the session
// source that synthesizes prompts, and reading JSON lines.

// maxTraceTokens bounds a request's input_length (a typo of a few digits
// would otherwise synthesize gigabytes); tests lower it.
var maxTraceTokens = 1 << 22

// traceRequest is one request of a trace.
type traceRequest struct {
	line    int     // line in the file
	ms      float64 // the trace's timestamp, in milliseconds
	in, out int     // input and output tokens
	hashIDs []uint64
	unique  bool // no hash ids: a prompt of its own
}

// traceSession is the requests of one session, in the order sent.
type traceSession struct {
	id    string // "": "line-N", N the line of the first request
	reqs  []traceRequest
	extra map[string]any // metadata of the format (read only: may be shared)
}

// traceFields names a format's fields in errors.
type traceFields struct{ timestamp, input, output string }

// jsonFields are the field names of the JSONL traces.
var jsonFields = traceFields{"timestamp", "input_length", "output_length"}

// traceLine checks the fields of one trace request: the timestamp (in
// units of scale ms), the lengths and, when blockSize > 0, the hash ids,
// which must hold input_length: (len-1)*blockSize < input_length <=
// len*blockSize. Errors are "field: problem".
func traceLine(f traceFields, line int, ts *float64, scale float64, in, out *int, hashIDs *[]int64, blockSize int) (traceRequest, error) {
	req := traceRequest{line: line}
	switch {
	case ts == nil:
		return req, fmt.Errorf("%s: missing", f.timestamp)
	case *ts < 0 || math.IsNaN(*ts) || math.IsInf(*ts, 0):
		return req, fmt.Errorf("%s: %g is not a time", f.timestamp, *ts)
	case *ts*scale > conv.MaxTimestampMs:
		return req, fmt.Errorf("%s: %g is past the trace clock's range (%g ms, 200 years)", f.timestamp, *ts, float64(conv.MaxTimestampMs))
	case in == nil:
		return req, fmt.Errorf("%s: missing", f.input)
	case *in < 1:
		return req, fmt.Errorf("%s: %d: a prompt needs at least one token", f.input, *in)
	case *in > maxTraceTokens:
		return req, fmt.Errorf("%s: %d is more than the limit %d", f.input, *in, maxTraceTokens)
	case out == nil:
		return req, fmt.Errorf("%s: missing", f.output)
	case *out < 0:
		return req, fmt.Errorf("%s: %d is negative", f.output, *out)
	}
	req.ms, req.in, req.out = *ts*scale, *in, *out
	if scale != 1 {
		req.ms = math.Round(req.ms*1e3) / 1e3 // to the microsecond: 61.114 s is 61114 ms
	}
	if blockSize == 0 {
		req.unique = true
		return req, nil
	}
	if hashIDs == nil {
		return req, errors.New("hash_ids: missing")
	}
	ids := *hashIDs
	if k := len(ids); *in > k*blockSize || *in <= (k-1)*blockSize {
		return req, fmt.Errorf("hash_ids: %d blocks of %d tokens do not hold %s %d (want %d blocks)", k, blockSize, f.input, *in, (*in+blockSize-1)/blockSize)
	}
	req.hashIDs = make([]uint64, len(ids))
	for i, id := range ids {
		if id < 0 {
			return req, fmt.Errorf("hash_ids[%d]: %d is negative", i, id)
		}
		req.hashIDs[i] = uint64(id)
	}
	return req, nil
}

// reqArena allocates the one-request slices of sessions in chunks (a
// trace of millions of rows would otherwise make millions of small
// allocations). Appending to such a slice copies it (its capacity is 1).
type reqArena struct{ buf []traceRequest }

func (a *reqArena) one(r traceRequest) []traceRequest {
	if len(a.buf) == cap(a.buf) {
		a.buf = make([]traceRequest, 0, 4096)
	}
	a.buf = append(a.buf, r)
	n := len(a.buf)
	return a.buf[n-1 : n : n]
}

// traceSource yields the sessions of a parsed trace in the order of their
// first request, synthesizing each prompt when its session is asked for.
// It holds the parsed requests (their lengths and hash ids, not text).
type traceSource struct {
	format   string
	name     string
	sessions []traceSession
	first    float64 // the earliest timestamp, ms
	blocks   *synth.Blocks
	tokName  string
	i        int
	err      error
}

// newTraceSource sorts the sessions by their first request (stably: ties
// keep the file's order), unless they are in order already, and prepares
// the block synthesis.
func newTraceSource(format, name string, sessions []traceSession, blockSize int, o Options) (*traceSource, error) {
	tok, err := tokenize.Load(o.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if blockSize == 0 {
		blockSize = MooncakeBlockSize
	}
	blocks, err := synth.NewBlocks(tok, blockSize, o.Seed, 0)
	if err != nil {
		return nil, err
	}
	for i := range sessions {
		slices.SortStableFunc(sessions[i].reqs, func(a, b traceRequest) int { return compareMs(a.ms, b.ms) })
	}
	byFirst := func(a, b traceSession) int { return compareMs(a.reqs[0].ms, b.reqs[0].ms) }
	if !slices.IsSortedFunc(sessions, byFirst) {
		slices.SortStableFunc(sessions, byFirst)
	}
	s := &traceSource{format: format, name: name, sessions: sessions, blocks: blocks, tokName: tok.Name()}
	if len(sessions) > 0 {
		s.first = sessions[0].reqs[0].ms
	}
	return s, nil
}

func compareMs(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Len returns the number of sessions.
func (s *traceSource) Len() int { return len(s.sessions) }

// Next returns the next session: per request a user message of exactly
// input_length tokens (its blocks, or a prompt of its own) sent at its
// timestamp after the first request's, and an assistant message asking
// for output_length tokens (at least 1). Each user message is a whole
// prompt (history "none").
func (s *traceSource) Next() (conv.Conversation, bool) {
	if s.err != nil || s.i >= len(s.sessions) {
		return conv.Conversation{}, false
	}
	ts := &s.sessions[s.i]
	c := conv.Conversation{
		ID:       cmp.Or(ts.id, "line-"+strconv.Itoa(ts.reqs[0].line)),
		History:  conv.HistoryNone,
		Messages: make([]conv.Message, 0, 2*len(ts.reqs)),
		Meta:     map[string]any{"trace": s.format, "line": ts.reqs[0].line, "tokenizer": s.tokName},
	}
	for k, v := range ts.extra {
		c.Meta[k] = v
	}
	for _, r := range ts.reqs {
		var (
			text string
			err  error
		)
		if r.unique {
			text, err = s.blocks.Unique(uint64(r.line), r.in)
		} else {
			text, err = s.blocks.Prompt(r.hashIDs, r.in)
		}
		if err != nil {
			s.err = &jsonl.Error{File: s.name, Line: r.line, Err: fmt.Errorf("input_length: %w", err)}
			return conv.Conversation{}, false
		}
		at := math.Round((r.ms-s.first)*1e3) / 1e3 // to the microsecond
		c.Messages = append(c.Messages,
			conv.Message{Role: conv.RoleUser, Content: text, Tokens: r.in, TimestampMs: &at},
			conv.Message{Role: conv.RoleAssistant, OutputTokens: max(r.out, 1)})
	}
	s.sessions[s.i] = traceSession{} // the parsed requests are not needed again
	s.i++
	return c, true
}

func (s *traceSource) Err() error { return s.err }

func (s *traceSource) Close() error { return nil }

// eachJSONLine calls f with each non-blank line of r, decoded, and its
// number; an error comes back as file:line: field: problem.
func eachJSONLine[T any](r io.Reader, name string, f func(line int, m *T) error) error {
	lines := jsonl.NewLines(r)
	for {
		b, n, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			var m T
			if err = decodeTraceLine(b, &m); err == nil {
				err = f(n, &m)
			}
		}
		if err != nil {
			return &jsonl.Error{File: name, Line: n, Err: err}
		}
	}
}

// decodeTraceLine decodes one JSON line of a trace into v; errors are
// "field: problem".
func decodeTraceLine(b []byte, v any) error {
	if b[0] != '{' {
		return errors.New("request: not a JSON object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return jsonl.FieldError(err)
	}
	return nil
}

// firstLineHas reports whether the first line of head is a JSON object
// with every key of keys.
func firstLineHas(head []byte, keys ...string) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
