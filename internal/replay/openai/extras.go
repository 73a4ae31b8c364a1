package openai

import (
	"encoding/json"
)

// knownTopLevel are the response fields of the OpenAI schema (and the
// simulator's own); any other top-level field is kept as a server extra.
var knownTopLevel = map[string]bool{
	"id": true, "object": true, "created": true, "model": true, "choices": true,
	"usage": true, "system_fingerprint": true, "service_tier": true,
	"prompt_logprobs": true, "kv_transfer_params": true, "sim_sent_ns": true,
}

// TopLevelExtras returns the non-standard top-level fields of a whole
// (non-streamed) response, merged with what was found already.
func TopLevelExtras(body []byte, have json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return have
	}
	extra := map[string]json.RawMessage{}
	if len(have) > 0 {
		json.Unmarshal(have, &extra)
	}
	for k, v := range m {
		if !knownTopLevel[k] && string(v) != "null" {
			extra[k] = v
		}
	}
	if len(extra) == 0 {
		return nil
	}
	b, _ := json.Marshal(extra)
	return b
}
