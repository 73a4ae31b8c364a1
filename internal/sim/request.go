package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// endpoint is the kind of completion request.
type endpoint int

const (
	chatEndpoint endpoint = iota
	completionsEndpoint
)

// maxN is the largest n accepted.
const maxN = 128

// apiError is an OpenAI-style error response.
type apiError struct {
	status  int
	typ     string
	code    string
	param   string
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func badRequest(code, param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: code, param: param, message: fmt.Sprintf(format, args...)}
}

// rawMessage is a chat message as sent.
type rawMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// rawRequest is the union of the chat and completions request fields the
// simulator reads; others are accepted and ignored.
type rawRequest struct {
	Model         string          `json:"model"`
	Messages      []rawMessage    `json:"messages"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           *int            `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	N                   *int            `json:"n"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Seed                *int64          `json:"seed"`
	Echo                bool            `json:"echo"`
	ConversationID      json.RawMessage `json:"conversation_id"`
}

// request is a validated completion request.
type request struct {
	kind           endpoint
	model          string
	stream         bool
	includeUsage   bool
	continuous     bool
	maxTokens      int // 0 = not given
	minTokens      int
	ignoreEOS      bool
	n              int
	seed           *int64
	conversationID string
	// segments are the chat template pieces (chat) or the prompt text
	// (completions, one segment); promptIDs are given token ids instead.
	segments  []string
	promptIDs []int
}

// Chat template markers. The prompt of a chat request is rendered as
//
//	<|im_start|>ROLE\nCONTENT<|im_end|>\n   (each message)
//	<|im_start|>assistant\n                 (generation prompt)
//
// and each of those segments is tokenized on its own.
const (
	imStart = "<|im_start|>"
	imEnd   = "<|im_end|>"
)

var validRoles = map[string]bool{
	"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true,
}

// parseRequest decodes and validates body for endpoint kind. served is the
// served model id and maxRunning the cap on running sequences (0 = none).
func parseRequest(kind endpoint, body []byte, served string, maxRunning int) (*request, *apiError) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("invalid_json", "", "request body is empty; send a JSON object")
	}
	var raw rawRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return nil, badRequest("invalid_json", "", "invalid JSON body: %v", err)
	}
	if dec.More() {
		return nil, badRequest("invalid_json", "", "invalid JSON body: data after the JSON object")
	}
	req := &request{kind: kind, model: raw.Model, stream: raw.Stream, ignoreEOS: raw.IgnoreEOS, seed: raw.Seed, n: 1}
	if req.model == "" {
		req.model = served
	} else if req.model != served {
		return nil, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
			message: fmt.Sprintf("The model `%s` does not exist. This server serves %q.", raw.Model, served)}
	}
	if o := raw.StreamOptions; o != nil {
		if !raw.Stream {
			return nil, badRequest("invalid_value", "stream_options", "stream_options is only allowed when stream is true")
		}
		req.includeUsage = o.IncludeUsage
		// As in vLLM, per-chunk usage is sent only when usage is included.
		req.continuous = o.IncludeUsage && o.ContinuousUsageStats
	}
	mt := raw.MaxTokens
	param := "max_tokens"
	if raw.MaxCompletionTokens != nil {
		mt, param = raw.MaxCompletionTokens, "max_completion_tokens"
	}
	if mt != nil {
		if *mt < 1 {
			return nil, badRequest("invalid_value", param, "%s must be at least 1, got %d", param, *mt)
		}
		req.maxTokens = *mt
	}
	if raw.MinTokens != nil {
		if *raw.MinTokens < 0 {
			return nil, badRequest("invalid_value", "min_tokens", "min_tokens must be >= 0, got %d", *raw.MinTokens)
		}
		if req.maxTokens > 0 && *raw.MinTokens > req.maxTokens {
			return nil, badRequest("invalid_value", "min_tokens", "min_tokens (%d) must be <= %s (%d)", *raw.MinTokens, param, req.maxTokens)
		}
		req.minTokens = *raw.MinTokens
	}
	if raw.N != nil {
		if *raw.N < 1 || *raw.N > maxN {
			return nil, badRequest("invalid_value", "n", "n must be between 1 and %d, got %d", maxN, *raw.N)
		}
		if maxRunning > 0 && *raw.N > maxRunning {
			return nil, badRequest("invalid_value", "n", "n (%d) exceeds the server's max running sequences (%d)", *raw.N, maxRunning)
		}
		req.n = *raw.N
	}
	if t := raw.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return nil, badRequest("invalid_value", "temperature", "temperature must be between 0 and 2, got %v", *t)
	}
	if p := raw.TopP; p != nil && !(*p > 0 && *p <= 1) {
		return nil, badRequest("invalid_value", "top_p", "top_p must be in (0, 1], got %v", *p)
	}
	if id, err := parseConversationID(raw.ConversationID); err != nil {
		return nil, badRequest("invalid_value", "conversation_id", "conversation_id: %v", err)
	} else {
		req.conversationID = id
	}
	var aerr *apiError
	switch kind {
	case chatEndpoint:
		aerr = parseMessages(req, raw.Messages)
	case completionsEndpoint:
		if raw.Echo {
			return nil, badRequest("invalid_value", "echo", "echo is not supported by the simulator")
		}
		aerr = parsePrompt(req, raw.Prompt)
	}
	if aerr != nil {
		return nil, aerr
	}
	return req, nil
}

// parseConversationID accepts a string or a number.
func parseConversationID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", errors.New("want a string or a number")
}

// parseMessages renders the chat template segments of msgs into req.
func parseMessages(req *request, msgs []rawMessage) *apiError {
	if len(msgs) == 0 {
		return badRequest("missing_field", "messages", "messages is required and must be a non-empty array")
	}
	req.segments = make([]string, 0, len(msgs)+1)
	for i, m := range msgs {
		param := fmt.Sprintf("messages[%d]", i)
		if !validRoles[m.Role] {
			if m.Role == "" {
				return badRequest("missing_field", param+".role", "%s.role is required", param)
			}
			return badRequest("invalid_value", param+".role", "%s.role %q is not one of system, developer, user, assistant, tool, function", param, m.Role)
		}
		content, err := contentText(m.Content)
		if err != nil {
			return badRequest("invalid_value", param+".content", "%s.content: %v", param, err)
		}
		req.segments = append(req.segments, imStart+m.Role+"\n"+content+imEnd+"\n")
	}
	req.segments = append(req.segments, imStart+"assistant\n")
	return nil
}

// contentText returns the text of a message content: a string, null, or
// an array of parts whose "text" parts are concatenated (other parts, such
// as images, count as no text).
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '[':
		var parts []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", fmt.Errorf("want a string or an array of content parts: %w", err)
		}
		var b strings.Builder
		for i, p := range parts {
			switch {
			case p.Type == "":
				return "", fmt.Errorf("part %d: type is required", i)
			case p.Type == "text" && p.Text == nil:
				return "", fmt.Errorf("part %d: text part without text", i)
			case p.Text != nil:
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(*p.Text)
			}
		}
		return b.String(), nil
	default:
		return "", errors.New("want a string or an array of content parts")
	}
}

// parsePrompt reads a completions prompt: a string, an array of one
// string, an array of token ids or an array of one such array.
func parsePrompt(req *request, raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return badRequest("missing_field", "prompt", "prompt is required")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return badRequest("invalid_value", "prompt", "prompt is empty")
		}
		req.segments = []string{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err == nil {
		if len(ss) != 1 {
			return badRequest("invalid_value", "prompt", "the simulator takes one prompt per request, got %d", len(ss))
		}
		if ss[0] == "" {
			return badRequest("invalid_value", "prompt", "prompt is empty")
		}
		req.segments = ss
		return nil
	}
	var ids []int
	if err := json.Unmarshal(raw, &ids); err != nil {
		var batch [][]int
		if err2 := json.Unmarshal(raw, &batch); err2 != nil {
			return badRequest("invalid_value", "prompt", "prompt must be a string or an array of token ids")
		}
		if len(batch) != 1 {
			return badRequest("invalid_value", "prompt", "the simulator takes one prompt per request, got %d", len(batch))
		}
		ids = batch[0]
	}
	if len(ids) == 0 {
		return badRequest("invalid_value", "prompt", "prompt is empty")
	}
	for i, id := range ids {
		if id < 0 {
			return badRequest("invalid_value", "prompt", "prompt[%d]: negative token id %d", i, id)
		}
	}
	req.promptIDs = ids
	return nil
}
