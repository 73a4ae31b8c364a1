package openai

import (
	"encoding/json"
	"strings"
)

// BaseURL normalises a server URL to end in /v1.
func BaseURL(u string) string {
	u = strings.TrimRight(u, "/")
	if strings.HasSuffix(u, "/v1") {
		return u
	}
	return u + "/v1"
}

// Path is the path of the endpoint under the base URL (BaseURL):
// /completions for APICompletions, /chat/completions otherwise.
func (a API) Path() string {
	if a == APICompletions {
		return "/completions"
	}
	return "/chat/completions"
}

// ModelInfo is one entry of /v1/models.
type ModelInfo struct {
	ID          string `json:"id"`
	MaxModelLen int    `json:"max_model_len"`
}

// Models reads the body of a GET /v1/models answer.
func Models(body []byte) ([]ModelInfo, error) {
	var list struct {
		Data []ModelInfo `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	return list.Data, nil
}

// ErrorMessage is the message of an error answer's body, for an error
// text: the OpenAI error object's message (or the error when it is a
// string), else the body itself, trimmed and cut to 300 bytes.
func ErrorMessage(b []byte) string {
	s := strings.TrimSpace(string(b))
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		var ae APIError
		if json.Unmarshal(e.Error, &ae) == nil && ae.Message != "" {
			s = ae.Message
		} else {
			var str string
			if json.Unmarshal(e.Error, &str) == nil {
				s = str
			}
		}
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// IsContextLengthError reports whether an error answer's body says that
// the request does not fit the model's context, in the words of vLLM,
// SGLang or OpenAI.
func IsContextLengthError(body []byte) bool {
	s := strings.ToLower(string(body))
	return strings.Contains(s, "context length") || strings.Contains(s, "maximum context") ||
		strings.Contains(s, "max_model_len") || strings.Contains(s, "context_length_exceeded")
}
