package source

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mtkit/mtkit/internal/jsonl"
)

// BailianBlockSize is the tokens per hash id of the Qwen Bailian traces
// (alibaba-edu/qwen-bailian-usagetraces-anon README: "16 tokens per
// block"; the file names say blksz_16).
const BailianBlockSize = 16

func init() {
	Register(Format{
		Name:   "bailian",
		Doc:    "Alibaba Qwen Bailian trace JSONL: chat_id, parent_chat_id, timestamp (s), input_length, output_length, turn, hash_ids (16-token blocks); one session per chain",
		Timed:  true,
		Detect: func(_ string, head []byte) bool { return firstLineHas(head, "chat_id", "parent_chat_id", "hash_ids") },
		Open:   openBailian,
	})
}

// bailianLine is one request of a Bailian trace.
type bailianLine struct {
	ChatID       *int64   `json:"chat_id"`
	ParentChatID *int64   `json:"parent_chat_id"`
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	Type         string   `json:"type"`
	Turn         int      `json:"turn"`
	HashIDs      *[]int64 `json:"hash_ids"`
}

// openBailian reads a Bailian trace. A request whose parent_chat_id is -1
// starts a session; every other request joins its parent's session (a
// parent not in the file, as in an excerpt, makes the request start a
// session of its own, marked parent_missing). A session's requests are
// sent in timestamp order; each request's hash ids already hold the
// earlier turns, so each is a whole prompt.
func openBailian(r io.Reader, name string, o Options) (Source, error) {
	type chat struct {
		id, parent int64
		req        traceRequest
	}
	var chats []chat
	index := map[int64]int{} // chat_id -> index in chats
	err := eachJSONLine(r, name, func(n int, m *bailianLine) error {
		switch {
		case m.ChatID == nil:
			return errors.New("chat_id: missing")
		case m.ParentChatID == nil:
			return errors.New("parent_chat_id: missing")
		case *m.ParentChatID == *m.ChatID:
			return fmt.Errorf("parent_chat_id: %d is the request's own chat_id", *m.ChatID)
		}
		if j, dup := index[*m.ChatID]; dup {
			return fmt.Errorf("chat_id: %d is also on line %d", *m.ChatID, chats[j].req.line)
		}
		req, err := traceLine(jsonFields, n, m.Timestamp, 1000, m.InputLength, m.OutputLength, m.HashIDs, BailianBlockSize)
		if err != nil {
			return err
		}
		index[*m.ChatID] = len(chats)
		chats = append(chats, chat{id: *m.ChatID, parent: *m.ParentChatID, req: req})
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Each chat joins the session of its root: the first ancestor whose
	// parent is -1 or not in the file. Roots are memoised, so the walk is
	// linear overall.
	session := make([]int, len(chats)) // chat index -> session index + 1
	var sessions []traceSession
	for i := range chats {
		var path []int
		j := i
		for session[j] == 0 {
			path = append(path, j)
			if len(path) > len(chats) {
				return nil, &jsonl.Error{File: name, Line: chats[i].req.line, Err: fmt.Errorf("parent_chat_id: %d leads to a cycle", chats[i].parent)}
			}
			p, ok := index[chats[j].parent]
			if !ok {
				ts := traceSession{id: "chat-" + strconv.FormatInt(chats[j].id, 10), extra: map[string]any{"chat_id": chats[j].id}}
				if chats[j].parent != -1 {
					ts.extra["parent_missing"] = chats[j].parent
				}
				sessions = append(sessions, ts)
				session[j] = len(sessions)
				break
			}
			j = p
		}
		for _, k := range path {
			session[k] = session[j]
		}
	}
	for i, c := range chats {
		s := &sessions[session[i]-1]
		s.reqs = append(s.reqs, c.req)
	}
	return newTraceSource("bailian", name, sessions, BailianBlockSize, o)
}
