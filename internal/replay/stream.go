package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// choiceResult is what one choice of a response produced.
type choiceResult struct {
	Index        int
	Content      []byte
	Reasoning    []byte
	FirstToken   time.Time // first non-empty content or reasoning delta
	FirstContent time.Time // first non-empty content delta
	LastToken    time.Time
	Chunks       int     // token-bearing chunks
	ReasonChunks int     // chunks with reasoning deltas
	ITL          []int64 // gaps between token-bearing chunks, ns
	FinishReason string
	Extra        json.RawMessage // per-choice server extras (e.g. kv_transfer_params)
}

func (c *choiceResult) token(now time.Time, content, reasoning string) {
	if content == "" && reasoning == "" {
		return
	}
	if c.FirstToken.IsZero() {
		c.FirstToken = now
	} else {
		c.ITL = append(c.ITL, int64(now.Sub(c.LastToken)))
	}
	if content != "" && c.FirstContent.IsZero() {
		c.FirstContent = now
	}
	c.LastToken = now
	c.Chunks++
	if reasoning != "" {
		c.ReasonChunks++
		c.Reasoning = append(c.Reasoning, reasoning...)
	}
	c.Content = append(c.Content, content...)
}

// usage is the OpenAI usage object.
type usage struct {
	PromptTokens        *int64 `json:"prompt_tokens"`
	CompletionTokens    *int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// response is a parsed server response, streamed or not.
type response struct {
	Choices []*choiceResult
	Usage   *usage
	Extra   json.RawMessage // top-level extras, JSON object
	End     time.Time
}

func (r *response) choice(i int) *choiceResult {
	if i < 0 || i > 1024 {
		i = 0
	}
	for len(r.Choices) <= i {
		r.Choices = append(r.Choices, &choiceResult{Index: len(r.Choices)})
	}
	return r.Choices[i]
}

// chunk is one streamed chat or completions chunk, or a whole
// non-streamed response.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"message"`
		Text             string          `json:"text"`
		FinishReason     *string         `json:"finish_reason"`
		KVTransferParams json.RawMessage `json:"kv_transfer_params"`
	} `json:"choices"`
	Usage            *usage          `json:"usage"`
	KVTransferParams json.RawMessage `json:"kv_transfer_params"`
	Error            *apiError       `json:"error"`
}

// apiError is an OpenAI-style error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// errStream marks a malformed or truncated stream.
var errStream = errors.New("stream")

var extraKey = []byte(`"kv_transfer_params"`)

// apply folds one chunk, received at now, into the response.
func (r *response) apply(data []byte, now time.Time, streaming bool) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: bad chunk %.120q: %v", errStream, data, err)
	}
	if c.Error != nil {
		return fmt.Errorf("%w: server error in stream: %s", errStream, c.Error.Message)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		cr := r.choice(ch.Index)
		if streaming {
			cr.token(now, ch.Delta.Content+ch.Text, ch.Delta.ReasoningContent+ch.Delta.Reasoning)
		} else {
			cr.token(now, ch.Message.Content+ch.Text, ch.Message.ReasoningContent+ch.Message.Reasoning)
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

// readStream parses a server-sent-events body: "data:" lines (with or
// without a space), multi-line events, ":" comments, "event:"/"id:" lines,
// CRLF, lines of any length and the final "[DONE]". Each event is stamped
// with the time its last line was read. It returns when the stream ends;
// a stream that ends without [DONE] and without a finish reason is an error.
func readStream(body io.Reader, resp *response, now func() time.Time) error {
	br := bufio.NewReaderSize(body, 32<<10)
	var (
		data    []byte
		long    []byte
		pending bool
		done    bool
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
		return resp.apply(d, t, true)
	}
	for {
		line, err := br.ReadSlice('\n')
		t := now()
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			t = now()
			line = long
		}
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			if errors.Is(err, io.EOF) {
				if derr := dispatch(t); derr != nil {
					return derr
				}
				resp.End = t
				if !done && !resp.finished() {
					return fmt.Errorf("%w: ended without [DONE] or finish_reason", errStream)
				}
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if err := dispatch(t); err != nil {
				return err
			}
		case line[0] == ':': // comment
		case bytes.HasPrefix(line, []byte("data:")):
			v := line[5:]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			if pending {
				data = append(data, '\n')
			}
			data = append(data, v...)
			pending = true
			// Servers end every event with a blank line; dispatching a
			// complete JSON object at once keeps the timestamp of the
			// line that carried it, and tolerates servers that omit it.
			if json.Valid(data) || bytes.Equal(data, []byte("[DONE]")) {
				if err := dispatch(t); err != nil {
					return err
				}
			}
		default: // event:, id:, retry: and unknown fields are ignored
		}
		if done {
			resp.End = t
			return nil
		}
	}
}

// finished reports whether every choice got a finish reason.
func (r *response) finished() bool {
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
