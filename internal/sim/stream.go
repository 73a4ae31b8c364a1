package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// doneLine ends every stream.
var doneLine = []byte("data: [DONE]\n\n")

// jsonString returns s as a JSON string literal.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

// streamWriter writes the SSE chunks of one response. Every chunk is
// assembled by appending pre-rendered bytes to one reused buffer (no
// encoding/json on the hot path), stamped with "sim_sent_ns" right before
// it is written, and sent with one Write and one Flush.
type streamWriter struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	p         *plan
	vocab     *vocab
	clk       clock // stamps sim_sent_ns
	chat      bool
	heads     [][]byte // per choice: `data: {...,"choices":[{"index":I,`
	usageHead []byte   // `data: {...,"choices":[]`
	buf       []byte
	sent      []int // tokens sent per choice
	cached    int
	chunks    int
	err       error
}

func newStreamWriter(w http.ResponseWriter, p *plan, v *vocab, model string, clk clock) *streamWriter {
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), p: p, vocab: v, clk: clk, chat: p.req.kind == chatEndpoint,
		sent: make([]int, len(p.choices)), buf: make([]byte, 0, 512)}
	object := "chat.completion.chunk"
	if !sw.chat {
		object = "text_completion"
	}
	base := []byte(`data: {"id":`)
	base = append(base, jsonString(p.id)...)
	base = append(base, `,"object":"`...)
	base = append(base, object...)
	base = append(base, `","created":`...)
	base = strconv.AppendInt(base, p.created, 10)
	base = append(base, `,"model":`...)
	base = append(base, jsonString(model)...)
	base = append(base, `,"choices":[`...)
	sw.heads = make([][]byte, len(p.choices))
	for c := range p.choices {
		h := append([]byte(nil), base...)
		h = append(h, `{"index":`...)
		h = strconv.AppendInt(h, int64(c), 10)
		sw.heads[c] = append(h, ',')
	}
	sw.usageHead = append(base, ']')
	return sw
}

// start sends the response headers.
func (sw *streamWriter) start() error {
	h := sw.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	sw.w.WriteHeader(http.StatusOK)
	sw.err = sw.rc.Flush()
	return sw.err
}

// step sends token i of every choice that has one; chat choices get a
// role chunk first.
func (sw *streamWriter) step(i int) {
	for c := range sw.p.choices {
		cp := &sw.p.choices[c]
		if i >= cp.len() || sw.err != nil {
			continue
		}
		if i == 0 && sw.chat {
			sw.role(c)
		}
		reasoning := i < cp.reasoning.n
		var pc *piece
		if reasoning {
			pc = sw.vocab.at(cp.reasoning, i)
		} else {
			pc = sw.vocab.at(cp.content, i-cp.reasoning.n)
		}
		finish := ""
		if i == cp.len()-1 {
			finish = cp.finish
		}
		sw.token(c, pc, reasoning, finish)
	}
}

func (sw *streamWriter) role(c int) {
	b := append(sw.buf[:0], sw.heads[c]...)
	b = append(b, `"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
	if sw.p.req.continuous {
		b = sw.appendChunkUsage(b, 0)
	}
	sw.send(b)
}

func (sw *streamWriter) token(c int, pc *piece, reasoning bool, finish string) {
	b := append(sw.buf[:0], sw.heads[c]...)
	cp := &sw.p.choices[c]
	switch {
	case cp.tool != "" && !reasoning:
		b = sw.appendToolDelta(b, c, pc, finish != "")
	case !sw.chat:
		b = append(b, `"text":`...)
	case reasoning:
		b = append(b, `"delta":{"reasoning_content":`...)
	default:
		b = append(b, `"delta":{"content":`...)
	}
	if cp.tool == "" || reasoning {
		b = append(b, pc.json...)
		if sw.chat {
			b = append(b, '}')
		}
	}
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, '"')
	}
	b = append(b, "}]"...)
	sw.sent[c]++
	if sw.p.req.continuous {
		b = sw.appendChunkUsage(b, sw.sent[c])
	}
	sw.send(b)
}

// appendToolDelta appends the delta of one token of a tool call's
// arguments, as vLLM streams them: the first carries the call's id, type
// and function name; each carries a piece of the arguments text, whose
// pieces join into {"input": "TEXT"}.
func (sw *streamWriter) appendToolDelta(b []byte, c int, pc *piece, last bool) []byte {
	cp := &sw.p.choices[c]
	first := sw.sent[c] == cp.reasoning.n
	b = append(b, `"delta":{"tool_calls":[{"index":0,`...)
	if first {
		b = append(b, `"id":`...)
		b = append(b, jsonString(cp.callID)...)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = append(b, jsonString(cp.tool)...)
		b = append(b, `,"arguments":`...)
	} else {
		b = append(b, `"function":{"arguments":`...)
	}
	frag := string(pc.json[1 : len(pc.json)-1]) // the text, escaped as in a JSON string
	if first {
		frag = toolArgsHead + frag
	}
	if last {
		frag += toolArgsTail
	}
	b = append(b, jsonString(frag)...)
	return append(b, "}}]}"...)
}

// appendChunkUsage appends the usage of continuous_usage_stats: the
// prompt and the completion tokens of this choice so far.
func (sw *streamWriter) appendChunkUsage(b []byte, completion int) []byte {
	prompt := len(sw.p.prompt)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	return append(b, '}')
}

// send stamps b, an unterminated chunk object, and writes and flushes it.
func (sw *streamWriter) send(b []byte) {
	if sw.err != nil {
		return
	}
	b = append(b, `,"sim_sent_ns":`...)
	b = strconv.AppendInt(b, sw.clk.now().UnixNano(), 10)
	b = append(b, "}\n\n"...)
	sw.buf = b
	sw.write(b)
}

func (sw *streamWriter) write(b []byte) {
	if sw.err != nil {
		return
	}
	if _, sw.err = sw.w.Write(b); sw.err == nil {
		sw.err = sw.rc.Flush()
	}
	sw.chunks++
}

// malformed sends a data line whose JSON is cut off.
func (sw *streamWriter) malformed() {
	b := append(sw.buf[:0], sw.heads[0]...)
	if sw.chat {
		b = append(b, `"delta":{"cont`...)
	} else {
		b = append(b, `"te`...)
	}
	b = append(b, "\n\n"...)
	sw.buf = b
	sw.write(b)
}

// finish sends the usage chunk (when asked for) and [DONE].
func (sw *streamWriter) finish() {
	if sw.p.req.includeUsage {
		u := planUsage(sw.p, sw.cached)
		b := append(sw.buf[:0], sw.usageHead...)
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
		if d := u.PromptTokensDetails; d != nil {
			b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
			b = strconv.AppendInt(b, int64(d.CachedTokens), 10)
			b = append(b, '}')
		}
		if d := u.CompletionTokensDetails; d != nil {
			b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
			b = strconv.AppendInt(b, int64(d.ReasoningTokens), 10)
			b = append(b, '}')
		}
		b = append(b, '}')
		sw.send(b)
	}
	sw.write(doneLine)
}
