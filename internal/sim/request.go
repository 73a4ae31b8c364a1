package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []rawToolCall   `json:"tool_calls"`
	ToolCallID *string         `json:"tool_call_id"`
}

// rawToolCall is one tool call of an assistant message.
type rawToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// rawTool is one tool definition of the request.
type rawTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

// rawRequest is the union of the chat and completions request fields the
// simulator reads; others are accepted and ignored.
type rawRequest struct {
	Model         string          `json:"model"`
	Messages      []rawMessage    `json:"messages"`
	Tools         json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
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
	// tools names the functions offered; toolChoice is "none", "auto",
	// "required" or "function" (toolName then names it).
	tools      []string
	toolChoice string
	toolName   string
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
		if aerr == nil {
			aerr = parseTools(req, raw.Tools)
		}
		if aerr == nil {
			aerr = parseToolChoice(req, raw.ToolChoice)
		}
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
		calls, aerr := toolCallsText(param, m)
		if aerr != nil {
			return aerr
		}
		role := m.Role
		if role == "tool" {
			// Rendered as Qwen2.5's template does: a user turn holding
			// the result.
			role, content = "user", "<tool_response>\n"+content+"\n</tool_response>"
		}
		req.segments = append(req.segments, imStart+role+"\n"+content+calls+imEnd+"\n")
	}
	req.segments = append(req.segments, imStart+"assistant\n")
	return nil
}

// toolCallsText validates the tool fields of message param and renders
// its tool calls as Qwen2.5's template does, so that they count as
// prompt tokens: "\n<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>"
// per call. As in OpenAI's API, only an assistant message has tool_calls,
// and a tool message needs the tool_call_id of the call it answers.
func toolCallsText(param string, m rawMessage) (string, *apiError) {
	switch {
	case m.Role == "tool" && (m.ToolCallID == nil || *m.ToolCallID == ""):
		return "", badRequest("missing_field", param+".tool_call_id", "%s.tool_call_id is required for a tool message", param)
	case len(m.ToolCalls) > 0 && m.Role != "assistant":
		return "", badRequest("invalid_value", param+".tool_calls", "%s.tool_calls is only allowed on an assistant message, not %s", param, m.Role)
	}
	var b strings.Builder
	for i, c := range m.ToolCalls {
		p := fmt.Sprintf("%s.tool_calls[%d]", param, i)
		switch {
		case c.ID == "":
			return "", badRequest("missing_field", p+".id", "%s.id is required", p)
		case c.Type != "function":
			return "", badRequest("invalid_value", p+".type", "%s.type must be \"function\", got %q", p, c.Type)
		case c.Function.Name == "":
			return "", badRequest("missing_field", p+".function.name", "%s.function.name is required", p)
		}
		var args string
		if err := json.Unmarshal(c.Function.Arguments, &args); err != nil {
			return "", badRequest("invalid_value", p+".function.arguments", "%s.function.arguments must be a string", p)
		}
		name, _ := json.Marshal(c.Function.Name)
		fmt.Fprintf(&b, "\n<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", name, args)
	}
	return b.String(), nil
}

// parseTools validates the request's tool definitions and renders them
// into the system segment as Qwen2.5's template does (a "# Tools" block
// listing one JSON definition per line), so that they count as prompt
// tokens.
func parseTools(req *request, raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return badRequest("invalid_value", "tools", "tools must be an array of tool definitions")
	}
	if len(list) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n<tools>")
	for i, t := range list {
		var tool rawTool
		if err := json.Unmarshal(t, &tool); err != nil {
			return badRequest("invalid_value", fmt.Sprintf("tools[%d]", i), "tools[%d] must be an object", i)
		}
		if tool.Type != "function" || tool.Function == nil || tool.Function.Name == "" {
			return badRequest("invalid_value", fmt.Sprintf("tools[%d]", i), `tools[%d] must be {"type": "function", "function": {"name": ...}}`, i)
		}
		req.tools = append(req.tools, tool.Function.Name)
		var compact bytes.Buffer
		json.Compact(&compact, t)
		b.WriteString("\n")
		b.Write(compact.Bytes())
	}
	b.WriteString("\n</tools>")
	// The block goes at the end of the leading system message, or is one.
	const sys = imStart + "system\n"
	if first := req.segments[0]; strings.HasPrefix(first, sys) {
		req.segments[0] = strings.TrimSuffix(first, imEnd+"\n") + b.String() + imEnd + "\n"
	} else {
		req.segments = append([]string{sys + strings.TrimPrefix(b.String(), "\n\n") + imEnd + "\n"}, req.segments...)
	}
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

// parseToolChoice validates tool_choice as vLLM does: "none", "auto",
// "required" or {"type": "function", "function": {"name": N}} naming one
// of the tools; any choice but "none" needs tools. Absent, it is "auto"
// when tools are given.
func parseToolChoice(req *request, raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		if len(req.tools) > 0 {
			req.toolChoice = "auto"
		}
		return nil
	}
	var choice string
	if err := json.Unmarshal(raw, &choice); err == nil {
		switch choice {
		case "none", "auto", "required":
		default:
			return badRequest("invalid_value", "tool_choice", `tool_choice %q is not "none", "auto", "required" or a named function`, choice)
		}
	} else {
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
			return badRequest("invalid_value", "tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}`)
		}
		if !slices.Contains(req.tools, named.Function.Name) {
			return badRequest("invalid_value", "tool_choice", "tool_choice names function %q, which is not in tools", named.Function.Name)
		}
		choice, req.toolName = "function", named.Function.Name
	}
	if choice != "none" && len(req.tools) == 0 {
		return badRequest("invalid_value", "tool_choice", "tool_choice %s needs tools", string(raw))
	}
	req.toolChoice = choice
	return nil
}
