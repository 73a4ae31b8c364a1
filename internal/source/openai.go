package source

import "github.com/mtkit/mtkit/internal/convert"

// OpenAI chat datasets: records with "messages" and no "id" (ids are
// made from file:line), JSONL or JSON array, converted on the fly as
// mtconvert does by default (see openDataset).
func init() {
	Register(Format{
		Name:   "openai",
		Doc:    `OpenAI chat datasets: {"messages": [{"role", "content"}]} records without ids, JSONL or JSON array (converted as mtconvert does)`,
		Schema: convert.SchemaOpenAI,
		Detect: func(_ string, head []byte) bool {
			h := SniffJSON(head)
			return h.Has("messages") && !h.Has("id") && !isShareGPT(h)
		},
		Open: openDataset(convert.SchemaOpenAI),
	})
}
