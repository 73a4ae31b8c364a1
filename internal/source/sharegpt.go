package source

import "github.com/mtkit/mtkit/internal/convert"

// ShareGPT datasets (records with "conversations" of {"from", "value"}),
// JSON array or JSONL, converted on the fly as mtconvert does by default
// (see openDataset). A JSON array is cut into records as it is read, not
// decoded whole.
func init() {
	Register(Format{
		Name:   "sharegpt",
		Doc:    `ShareGPT datasets: {"id", "conversations": [{"from", "value"}]} records, JSON array or JSONL (converted as mtconvert does)`,
		Schema: convert.SchemaShareGPT,
		Detect: func(_ string, head []byte) bool {
			return isShareGPT(SniffJSON(head))
		},
		Open: openDataset(convert.SchemaShareGPT),
	})
}

// isShareGPT reports whether h shows ShareGPT's key for the messages.
func isShareGPT(h JSONHead) bool { return h.Has("conversations") || h.Has("conversation") }
