package openai

import (
	"encoding/json"
	"strconv"
)

// ToolChoice renders a --tool-choice setting as the tool_choice JSON
// value: auto, required and none as strings, anything else as the
// function of that name; nil when v is empty.
func ToolChoice(v string) json.RawMessage {
	switch v {
	case "":
		return nil
	case "auto", "required", "none":
		return json.RawMessage(strconv.Quote(v))
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": v}}) // strings always encode
	return b
}
