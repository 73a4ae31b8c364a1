// Package openai is the OpenAI wire protocol as mtrun speaks it, with no
// state of a run: the request bodies (Body writes a Request byte for
// byte as encoding/json would), the endpoints (BaseURL, API.Path, the
// /v1/models list), error bodies (ErrorMessage, IsContextLengthError),
// and the streamed (server-sent events) and whole chat and completions
// answers, parsed chunk by chunk into a Response (ReadStream), with a
// fast path for the chunk shapes servers send and encoding/json for the
// rest, and the non-standard top-level fields servers add
// (TopLevelExtras). The replay package sends the requests, chooses the
// HTTP client and times the answers.
package openai

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Choice is what one choice of a response produced.
type Choice struct {
	Index        int
	Content      []byte
	Reasoning    []byte
	ToolCalls    []byte    // tool-call deltas (function names and arguments), concatenated
	FirstToken   time.Time // first non-empty content, reasoning or tool-call delta
	FirstContent time.Time // first non-empty content or tool-call delta
	LastToken    time.Time
	Chunks       int     // token-bearing chunks
	ReasonChunks int     // chunks with reasoning deltas
	ITL          []int64 // gaps between token-bearing chunks, ns
	FinishReason string
	Extra        json.RawMessage // per-choice server extras (e.g. kv_transfer_params)
	// Tokens is the client tokenizer's count of Reasoning+Content, once
	// counted (the record's client_completion_tokens; the history reuses it).
	Tokens  int
	Counted bool
}

// token folds one delta into the choice; tool is the text of tool-call
// deltas (an answer that calls a tool streams no content), timed as
// content.
func (c *Choice) token(now time.Time, content, reasoning, tool string) {
	addToken(c, now, content, reasoning, tool)
}

// addToken is token for deltas held as strings (encoding/json) or as
// slices of the chunk (the fast parser, which thus copies nothing twice).
func addToken[S ~string | ~[]byte](c *Choice, now time.Time, content, reasoning, tool S) {
	if len(content) == 0 && len(reasoning) == 0 && len(tool) == 0 {
		return
	}
	if c.FirstToken.IsZero() {
		c.FirstToken = now
	} else {
		c.ITL = append(c.ITL, int64(now.Sub(c.LastToken)))
	}
	if (len(content) != 0 || len(tool) != 0) && c.FirstContent.IsZero() {
		c.FirstContent = now
	}
	c.ToolCalls = append(c.ToolCalls, tool...)
	c.LastToken = now
	c.Chunks++
	if len(reasoning) != 0 {
		c.ReasonChunks++
		c.Reasoning = append(c.Reasoning, reasoning...)
	}
	c.Content = append(c.Content, content...)
}

// Usage is the OpenAI usage object.
type Usage struct {
	PromptTokens            *int64             `json:"prompt_tokens"`
	CompletionTokens        *int64             `json:"completion_tokens"`
	PromptTokensDetails     *promptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails *completionDetails `json:"completion_tokens_details"`
}

type promptDetails struct {
	CachedTokens *int64 `json:"cached_tokens"`
}

type completionDetails struct {
	ReasoningTokens *int64 `json:"reasoning_tokens"`
}

// Response is a parsed server response, streamed or not.
type Response struct {
	Choices []*Choice
	Usage   *Usage
	Extra   json.RawMessage // top-level extras, JSON object
	End     time.Time
	// hint is how many token chunks the first choice is expected to
	// stream (the request's max_tokens, capped): its ITL and content
	// start with that room instead of growing chunk by chunk.
	hint int
	// skipped is the leading bytes of the last fast-parsed chunk up to
	// its first member the parser reads (the members before it only
	// skipped: id, object, created, model), which most servers repeat
	// in every chunk of a stream (see parseFast).
	skipped []byte
}

// NewResponse returns an empty response to a request whose max_tokens
// is hint (0: none).
func NewResponse(hint int) *Response { return &Response{hint: hint} }

// maxHint caps response.hint, so that a large max_tokens with a short
// answer costs no large allocation.
const maxHint = 4096

// bytesPerToken is the content room allowed per hinted token.
const bytesPerToken = 4

func (r *Response) choice(i int) *Choice {
	if i < 0 || i > 1024 {
		i = 0
	}
	for len(r.Choices) <= i {
		c := &Choice{Index: len(r.Choices)}
		if c.Index == 0 && r.hint > 1 {
			n := min(r.hint, maxHint)
			c.ITL = make([]int64, 0, n-1)
			c.Content = make([]byte, 0, n*bytesPerToken)
		}
		r.Choices = append(r.Choices, c)
	}
	return r.Choices[i]
}

// chunk is one streamed chat or completions chunk, or a whole
// non-streamed response.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string        `json:"content"`
			ReasoningContent string        `json:"reasoning_content"`
			Reasoning        string        `json:"reasoning"`
			ToolCalls        toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		Message struct {
			Content          string        `json:"content"`
			ReasoningContent string        `json:"reasoning_content"`
			Reasoning        string        `json:"reasoning"`
			ToolCalls        toolCallDelta `json:"tool_calls"`
		} `json:"message"`
		Text             string          `json:"text"`
		FinishReason     *string         `json:"finish_reason"`
		KVTransferParams json.RawMessage `json:"kv_transfer_params"`
	} `json:"choices"`
	Usage            *Usage          `json:"usage"`
	KVTransferParams json.RawMessage `json:"kv_transfer_params"`
	Error            *APIError       `json:"error"`
}

// toolCallDelta is the tool calls of a delta or message.
type toolCallDelta []struct {
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// text is the names and arguments of the calls, concatenated.
func (t toolCallDelta) text() string {
	var b strings.Builder
	for _, c := range t {
		b.WriteString(c.Function.Name)
		b.WriteString(c.Function.Arguments)
	}
	return b.String()
}

// APIError is an OpenAI-style error object.
type APIError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// ErrStream marks a malformed or truncated stream.
var ErrStream = errors.New("stream")

var extraKey = []byte(`"kv_transfer_params"`)

// Apply folds one chunk, received at now, into the response. Streamed
// chunks of the common shape take a parser without reflection
// (fastchunk); anything else goes through encoding/json.
func (r *Response) Apply(data []byte, now time.Time, streaming bool) error {
	if streaming {
		var buf [4]fastChoice
		if cs, u, ok := parseFast(data, buf[:0], &r.skipped); ok {
			for i := range cs {
				f := &cs[i]
				cr := r.choice(f.index)
				addToken(cr, now, join(f.content, f.text), join(f.reasoningContent, f.reasoning), nil)
				if len(f.finish) > 0 {
					cr.FinishReason = string(f.finish)
				}
			}
			if u != nil {
				r.Usage = u
			}
			return nil
		}
	}
	return r.applyJSON(data, now, streaming)
}

// applyJSON is apply through encoding/json.
func (r *Response) applyJSON(data []byte, now time.Time, streaming bool) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: bad chunk %.120q: %v", ErrStream, data, err)
	}
	if c.Error != nil {
		return fmt.Errorf("%w: server error in stream: %s", ErrStream, c.Error.Message)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		cr := r.choice(ch.Index)
		if streaming {
			cr.token(now, ch.Delta.Content+ch.Text, ch.Delta.ReasoningContent+ch.Delta.Reasoning, ch.Delta.ToolCalls.text())
		} else {
			cr.token(now, ch.Message.Content+ch.Text, ch.Message.ReasoningContent+ch.Message.Reasoning, ch.Message.ToolCalls.text())
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			cr.FinishReason = *ch.FinishReason
		}
		if len(ch.KVTransferParams) > 0 && string(ch.KVTransferParams) != "null" {
			cr.Extra = append(json.RawMessage(`{"kv_transfer_params":`), ch.KVTransferParams...)
			cr.Extra = append(cr.Extra, '}')
		}
	}
	if c.Usage != nil {
		r.Usage = c.Usage
	}
	if len(c.KVTransferParams) > 0 && string(c.KVTransferParams) != "null" && bytes.Contains(data, extraKey) {
		r.Extra = append(json.RawMessage(`{"kv_transfer_params":`), c.KVTransferParams...)
		r.Extra = append(r.Extra, '}')
	}
	return nil
}

// ReadStream parses a server-sent-events body: "data:" lines (with or
// without a space), multi-line events, ":" comments, "event:"/"id:" lines,
// CRLF, lines of any length and the final "[DONE]". Each event is stamped
// with now() when its last data line is parsed (time.Now: when it was
// read; httpwire.Response.Received: when its bytes arrived), and the end
// with now() at the end of the body. It returns when the stream ends;
// a stream that ends without [DONE] and without a finish reason is an error.
func ReadStream(body io.Reader, resp *Response, now func() time.Time) error {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() {
		br.Reset(nil)
		readerPool.Put(br)
	}()
	var (
		data    []byte
		long    []byte
		pending bool
		done    bool
		tData   time.Time // when the pending event's last data line was read
	)
	dispatch := func(t time.Time) error {
		if !pending {
			return nil
		}
		pending = false
		d := bytes.TrimSpace(data)
		data = data[:0]
		if bytes.Equal(d, []byte("[DONE]")) {
			done = true
			return nil
		}
		if len(d) == 0 {
			return nil
		}
		return resp.Apply(d, t, true)
	}
	// The clock is read for data lines, the end of the stream, and
	// nothing else (not for the blank line after each event).
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			if errors.Is(err, io.EOF) {
				end := now()
				if derr := dispatch(tData); derr != nil {
					return derr
				}
				resp.End = end
				if !done && !resp.finished() {
					return fmt.Errorf("%w: ended without [DONE] or finish_reason", ErrStream)
				}
				return nil
			}
			return err
		}
		for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n-- {
			line = line[:n-1]
		}
		switch {
		case len(line) == 0:
			if err := dispatch(tData); err != nil {
				return err
			}
		case line[0] == ':': // comment
		case bytes.HasPrefix(line, []byte("data:")):
			t := now()
			v := line[5:]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			// Servers end every event with a blank line, and an event is
			// stamped with the time of its last data line. A server that
			// omits the blank line is tolerated: a pending event that is
			// already a complete JSON object is dispatched, with its own
			// time, when the next data line arrives (the check runs only
			// then, off the common path).
			if pending && json.Valid(data) {
				if err := dispatch(tData); err != nil {
					return err
				}
			}
			if pending {
				data = append(data, '\n')
			}
			data = append(data, v...)
			pending = true
			tData = t
			if bytes.Equal(data, []byte("[DONE]")) {
				resp.End = t
				return nil
			}
		default: // event:, id:, retry: and unknown fields are ignored
		}
		if done { // a multi-line [DONE] event, ended by its blank line
			resp.End = now()
			return nil
		}
	}
}

// readerPool recycles the 32 KiB stream readers (one per request).
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// finished reports whether every choice got a finish reason.
func (r *Response) finished() bool {
	if len(r.Choices) == 0 {
		return false
	}
	for _, c := range r.Choices {
		if c.FinishReason == "" {
			return false
		}
	}
	return true
}

// fastChoice is one choice of a streamed chunk read by parseFastChunk;
// the strings are slices of the chunk.
type fastChoice struct {
	index                                      int
	content, reasoningContent, reasoning, text []byte
	finish                                     []byte
}

// join is a+b, without a copy when one of them is empty (the common
// case: chat chunks carry content, completions chunks text).
func join(a, b []byte) []byte {
	switch {
	case len(b) == 0:
		return a
	case len(a) == 0:
		return b
	}
	return append(append(make([]byte, 0, len(a)+len(b)), a...), b...)
}

// parseFastChunk parses a streamed chunk of the common shape without
// reflection: an object whose "choices" hold "index", "delta" (content,
// reasoning_content, reasoning), "text" and "finish_reason", and whose
// "usage" (nil: null or none) holds integer token counts; other fields
// skipped. It gives up (ok false) on anything encoding/json might read
// differently or reject: escapes or invalid UTF-8 in strings, non-null
// error or kv_transfer_params, a "message", type mismatches, numbers
// that are not plain integers, duplicate or case-folded keys, more than
// cap(out) choices, invalid JSON. The caller then uses encoding/json, so
// the result is always the same as json.Unmarshal into chunk would give.
func parseFastChunk(d []byte, out []fastChoice) (cs []fastChoice, u *Usage, ok bool) {
	return parseFast(d, out, nil)
}

// parseFast is parseFastChunk that skips, when skipped is not nil, the
// bytes of the chunk that equal *skipped, and sets *skipped to the bytes
// before the first member it reads (an object's opening and members it
// only skipped). Those bytes always leave the parser in the same state:
// at a key, inside the object, with nothing seen; so a chunk that starts
// with them parses as it would from its first byte. Servers repeat the
// id, object, created and model of a stream in every chunk, about half
// of its bytes.
func parseFast(d []byte, out []fastChoice, skipped *[]byte) (cs []fastChoice, u *Usage, ok bool) {
	p := fastParser{d: d}
	var seen [3]bool // choices, usage, error or kv_transfer_params
	memo := skipped != nil
	if memo && len(*skipped) > 0 && bytes.HasPrefix(d, *skipped) {
		p.i = len(*skipped)
		memo = false
	} else {
		p.ws()
		if !p.eat('{') {
			return nil, nil, false
		}
		p.ws()
		if p.eat('}') {
			return out, nil, p.end()
		}
	}
	for {
		at := p.i
		key, ascii, ok := p.strBytes()
		if !ok || !p.colon() {
			return nil, nil, false
		}
		k := -1
		switch string(key) {
		case "choices", "usage", "error", "kv_transfer_params":
			if memo {
				*skipped = append((*skipped)[:0], d[:at]...)
				memo = false
			}
		}
		switch string(key) {
		case "choices":
			k = 0
			if out, ok = p.choices(out); !ok {
				return nil, nil, false
			}
		case "usage":
			k = 1
			if u, ok = p.usage(); !ok {
				return nil, nil, false
			}
		case "error", "kv_transfer_params":
			if !p.null() {
				return nil, nil, false
			}
		default:
			if foldsTo(key, ascii, "choices", "usage", "error", "kv_transfer_params") || !p.skip(0) {
				return nil, nil, false
			}
		}
		if k >= 0 {
			if seen[k] {
				return nil, nil, false
			}
			seen[k] = true
		}
		if !p.next('}') {
			if p.err {
				return nil, nil, false
			}
			return out, u, p.end()
		}
	}
}

// Usage reads a usage object (nil for null): the token counts as plain
// integers or null, and the details objects (or null).
func (p *fastParser) usage() (*Usage, bool) {
	if p.null() {
		return nil, true
	}
	b := &usageBlock{}
	u := &b.u
	ok := p.object(func(key []byte, ascii bool) bool {
		switch string(key) {
		case "prompt_tokens":
			return p.int64Ptr(&u.PromptTokens, &b.vals[0])
		case "completion_tokens":
			return p.int64Ptr(&u.CompletionTokens, &b.vals[1])
		case "prompt_tokens_details":
			return p.detail("cached_tokens", &b.vals[2], func(v *int64) { b.prompt = promptDetails{v}; u.PromptTokensDetails = &b.prompt })
		case "completion_tokens_details":
			return p.detail("reasoning_tokens", &b.vals[3], func(v *int64) { b.completion = completionDetails{v}; u.CompletionTokensDetails = &b.completion })
		}
		return !foldsTo(key, ascii, "prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details") && p.skip(0)
	})
	return u, ok
}

// usageBlock is a parsed usage object together with the values and
// details its pointers point at, so that a usage object in every chunk
// (continuous_usage_stats) costs one allocation, not one per field.
type usageBlock struct {
	u          Usage
	vals       [4]int64 // prompt, completion, cached, reasoning tokens
	prompt     promptDetails
	completion completionDetails
}

func (p *fastParser) detail(name string, slot *int64, set func(*int64)) bool {
	if p.null() {
		return true
	}
	var v *int64
	ok := p.object(func(key []byte, ascii bool) bool {
		if string(key) == name {
			return p.int64Ptr(&v, slot)
		}
		return !foldsTo(key, ascii, name) && p.skip(0)
	})
	set(v)
	return ok
}

// object reads an object, calling member for each key with the cursor on
// its value; member consumes the value. A key seen twice is refused.
func (p *fastParser) object(member func(key []byte, ascii bool) bool) bool {
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	var keys [8][]byte
	seen := keys[:0]
	for {
		key, ascii, ok := p.strBytes()
		if !ok || !p.colon() {
			return false
		}
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return false
			}
		}
		if len(seen) < cap(seen) {
			seen = append(seen, key)
		} else {
			return false
		}
		if !member(key, ascii) {
			return false
		}
		if !p.next('}') {
			return !p.err
		}
	}
}

// int64Ptr reads null (nil) or a plain integer that fits an int64; the
// integer is stored in slot and *dst points at it.
func (p *fastParser) int64Ptr(dst **int64, slot *int64) bool {
	if p.null() {
		*dst = nil
		return true
	}
	n, ok := p.number()
	if !ok || bytes.ContainsAny(n, ".eE") {
		return false
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return false
	}
	*slot = v
	*dst = slot
	return true
}

// fastParser is a cursor over one JSON chunk; err is set when the input
// is not what the fast path accepts.
type fastParser struct {
	d   []byte
	i   int
	err bool
}

func (p *fastParser) ws() {
	for p.i < len(p.d) {
		switch p.d[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.d) && p.d[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (p *fastParser) end() bool {
	p.ws()
	return p.i == len(p.d)
}

func (p *fastParser) colon() bool {
	p.ws()
	ok := p.eat(':')
	p.ws()
	return ok
}

// next consumes the separator after a member or element: true after a
// comma (another follows), false after the closing byte (or on error,
// with p.err set).
func (p *fastParser) next(closing byte) bool {
	p.ws()
	switch {
	case p.eat(','):
		p.ws()
		return true
	case p.eat(closing):
		return false
	}
	p.err = true
	return false
}

// strBytes reads a string without escapes and with valid UTF-8; ascii
// reports whether it is all ASCII.
func (p *fastParser) strBytes() (s []byte, ascii, ok bool) {
	if !p.eat('"') {
		return nil, false, false
	}
	start := p.i
	ascii = true
	// Eight bytes at a time while none of them needs a look.
	for p.i+8 <= len(p.d) && !special8(binary.LittleEndian.Uint64(p.d[p.i:])) {
		p.i += 8
	}
	for p.i < len(p.d) {
		c := p.d[p.i]
		if plainASCII[c] {
			p.i++
			continue
		}
		switch {
		case c == '"':
			s := p.d[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return nil, false, false
			}
			return s, ascii, true
		case c == '\\' || c < 0x20:
			return nil, false, false
		}
		ascii = false
		p.i++
	}
	return nil, false, false
}

// special8 reports whether any of the eight bytes of v is not plainASCII
// (a quote, a backslash, a control byte or a byte of 0x80 and above).
func special8(v uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return (v&highs)|((v-0x20*ones)&^v&highs)|zero(v^('"'*ones))|zero(v^('\\'*ones)) != 0
}

// plainASCII marks the bytes a string may hold as they are: printable
// ASCII other than '"' and '\\'.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strOrNull reads a string or null (nil).
func (p *fastParser) strOrNull() ([]byte, bool) {
	if p.null() {
		return nil, true
	}
	s, _, ok := p.strBytes()
	return s, ok
}

// null consumes a null literal.
func (p *fastParser) null() bool {
	if bytes.HasPrefix(p.d[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}

// skip consumes any JSON value (strings without escapes only).
func (p *fastParser) skip(depth int) bool {
	if p.i >= len(p.d) || depth > 32 {
		return false
	}
	switch c := p.d[p.i]; {
	case c == '"':
		_, _, ok := p.strBytes()
		return ok
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		p.i++
		p.ws()
		if p.eat(closing) {
			return true
		}
		for {
			if c == '{' {
				if _, _, ok := p.strBytes(); !ok || !p.colon() {
					return false
				}
			}
			if !p.skip(depth + 1) {
				return false
			}
			if !p.next(closing) {
				return !p.err
			}
		}
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.null()
	default:
		_, ok := p.number()
		return ok
	}
}

func (p *fastParser) lit(s string) bool {
	if bytes.HasPrefix(p.d[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

// number consumes a JSON number and returns its text.
func (p *fastParser) number() ([]byte, bool) {
	start := p.i
	p.eat('-')
	digits := func() int {
		n := 0
		for p.i < len(p.d) && p.d[p.i] >= '0' && p.d[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.eat('0') {
		// no more integer digits after a leading zero
	} else if digits() == 0 {
		return nil, false
	}
	if p.eat('.') && digits() == 0 {
		return nil, false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return p.d[start:p.i], true
}

// choices reads the choices array (or null) into out.
func (p *fastParser) choices(out []fastChoice) ([]fastChoice, bool) {
	if p.null() {
		return out, true
	}
	if !p.eat('[') {
		return nil, false
	}
	p.ws()
	if p.eat(']') {
		return out, true
	}
	for {
		if len(out) == cap(out) || !p.eat('{') {
			return nil, false
		}
		var c fastChoice
		var seen [5]bool
		p.ws()
		if !p.eat('}') {
			for {
				key, ascii, ok := p.strBytes()
				if !ok || !p.colon() {
					return nil, false
				}
				k := -1
				switch string(key) {
				case "index":
					k = 0
					n, ok := p.number()
					if !ok {
						return nil, false
					}
					v, err := strconv.Atoi(string(n))
					if err != nil {
						return nil, false
					}
					c.index = v
				case "delta":
					k = 1
					if !p.delta(&c) {
						return nil, false
					}
				case "text":
					k = 2
					if c.text, ok = p.strOrNull(); !ok {
						return nil, false
					}
				case "finish_reason":
					k = 3
					if c.finish, ok = p.strOrNull(); !ok {
						return nil, false
					}
				case "kv_transfer_params":
					k = 4
					if !p.null() {
						return nil, false
					}
				default:
					if foldsTo(key, ascii, "index", "delta", "text", "finish_reason", "kv_transfer_params", "message") || !p.skip(0) {
						return nil, false
					}
				}
				if k >= 0 {
					if seen[k] {
						return nil, false
					}
					seen[k] = true
				}
				if !p.next('}') {
					if p.err {
						return nil, false
					}
					break
				}
			}
		}
		out = append(out, c)
		if !p.next(']') {
			return out, !p.err
		}
	}
}

// delta reads a choice's delta object (or null).
func (p *fastParser) delta(c *fastChoice) bool {
	if p.null() {
		return true
	}
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	var seen [3]bool
	for {
		key, ascii, ok := p.strBytes()
		if !ok || !p.colon() {
			return false
		}
		var dst *[]byte
		k := -1
		switch string(key) {
		case "content":
			dst, k = &c.content, 0
		case "reasoning_content":
			dst, k = &c.reasoningContent, 1
		case "reasoning":
			dst, k = &c.reasoning, 2
		case "tool_calls":
			// Tool-call deltas take the encoding/json path (applyJSON);
			// null and [] carry none.
			if !p.null() {
				if !bytes.HasPrefix(p.d[p.i:], []byte("[]")) {
					return false
				}
				p.i += 2
			}
		default:
			if foldsTo(key, ascii, "content", "reasoning_content", "reasoning", "tool_calls") || !p.skip(0) {
				return false
			}
		}
		if k >= 0 {
			if seen[k] {
				return false
			}
			seen[k] = true
			if *dst, ok = p.strOrNull(); !ok {
				return false
			}
		}
		if !p.next('}') {
			return !p.err
		}
	}
}

// foldsTo reports whether key matches one of names case-insensitively
// (encoding/json would then fill that field). An ASCII key can fold only
// to a name of its length; others (Kelvin sign, long s) take
// strings.EqualFold.
func foldsTo(key []byte, ascii bool, names ...string) bool {
	for _, n := range names {
		if ascii {
			if len(key) == len(n) && asciiFold(key, n) {
				return true
			}
		} else if strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// asciiFold reports whether the ASCII key equals name, a lower-case
// ASCII name, ignoring case; len(key) == len(name).
func asciiFold(key []byte, name string) bool {
	for i := range len(name) {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
