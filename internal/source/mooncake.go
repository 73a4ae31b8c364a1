package source

import (
	"io"
)

// MooncakeBlockSize is the tokens per hash id of Mooncake's traces
// (kvcache-ai/Mooncake FAST25-release/README.md).
const MooncakeBlockSize = 512

func init() {
	Register(Format{
		Name:  "mooncake",
		Doc:   "Mooncake trace JSONL: timestamp (ms), input_length, output_length, hash_ids (512-token blocks)",
		Timed: true,
		Detect: func(_ string, head []byte) bool {
			return firstLineHas(head, "hash_ids", "input_length") && !firstLineHas(head, "chat_id")
		},
		Open: openMooncake,
	})
}

// mooncakeLine is one request of a Mooncake trace.
type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      *[]int64 `json:"hash_ids"`
}

// openMooncake reads a Mooncake trace: one request per line, each its own
// session. Every request's prompt is its hash ids' blocks.
func openMooncake(r io.Reader, name string, o Options) (Source, error) {
	var sessions []traceSession
	var arena reqArena
	err := eachJSONLine(r, name, func(n int, m *mooncakeLine) error {
		req, err := traceLine(jsonFields, n, m.Timestamp, 1, m.InputLength, m.OutputLength, m.HashIDs, MooncakeBlockSize)
		if err == nil {
			sessions = append(sessions, traceSession{reqs: arena.one(req)})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return newTraceSource("mooncake", name, sessions, MooncakeBlockSize, o)
}
