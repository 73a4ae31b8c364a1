package source

import "github.com/mtkit/mtkit/internal/convert"

// vLLM's conversation list: a JSON array of {"id", "messages"} objects,
// as vLLM's benchmark_serving_multi_turn.py reads and writes. The array is
// decoded one element at a time as the replay asks, not all up front.
func init() {
	Register(Format{
		Name:   "vllm",
		Doc:    `vLLM's JSON list of {"id", "messages"} conversations`,
		Schema: convert.SchemaVLLM,
		Detect: func(_ string, head []byte) bool {
			h := SniffJSON(head)
			return h.List && h.Has("id", "messages") && !isShareGPT(h)
		},
		Open: openConvReader,
	})
}
