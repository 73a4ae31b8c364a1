package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
)

// Schema is the record schema of a dataset internal/convert reads:
// ShareGPT's "conversations" of {"from", "value"}, or OpenAI's "messages"
// (one record a line, or vLLM's JSON list). The input formats themselves
// (names, detection, opening) are internal/source's registry; a dataset
// format there names its Schema.
type Schema string

// The schemas. SchemaAuto detects the schema of each input (see Detect).
const (
	SchemaAuto     Schema = ""
	SchemaShareGPT Schema = "sharegpt"
	SchemaOpenAI   Schema = "openai"
	SchemaVLLM     Schema = "vllm"
)

// parseSchema checks a schema ("auto" or "" is SchemaAuto).
func parseSchema(s string) (Schema, error) {
	switch f := Schema(strings.ToLower(s)); f {
	case "", "auto":
		return SchemaAuto, nil
	case SchemaShareGPT, SchemaOpenAI, SchemaVLLM:
		return f, nil
	}
	return "", fmt.Errorf("format %q: want auto, sharegpt, openai or vllm", s)
}

// record is one decoded input record: a ShareGPT item (possibly one part
// of a longer conversation) or one OpenAI/vLLM conversation.
type record struct {
	id     string // as in the source, or "file:line" when it has none
	format Schema
	msgs   []conv.Message
	// turns is the number of messages in the source record, dropped ones
	// included (the unit of ShareGPT part numbers).
	turns int
	// dropped counts messages dropped because their role is a tool or
	// function result that names no tool call, which a replay cannot send.
	dropped int
	// system is the conversation-level system prompt ("system" or
	// "system_prompt"), "" if none.
	system string
	// tools is the conversation-level tool definitions, OpenAI-shaped.
	tools []json.RawMessage
	file  string
	line  int
	// badText, when set, names the first field of the source record
	// whose invalid UTF-8 (or unpaired surrogate) was replaced by U+FFFD.
	badText error
}

// errNoFormatKey is returned for a record with neither "conversations" nor
// "messages".
var errNoFormatKey = errors.New(`conversations: missing (no "conversations" or "messages" key)`)

// decoder decodes records of one input.
type decoder struct {
	sc scanner
	// format is the input's record schema once known: SchemaShareGPT (key
	// "conversations") or SchemaOpenAI/SchemaVLLM (key "messages").
	format Schema
	// list reports whether the input is a JSON array (vLLM's container).
	list bool
	// calls numbers the tool calls of the record being decoded.
	calls toolState
}

// listKey returns the top-level key that holds the messages of format f.
func listKey(f Schema) string {
	if f == SchemaShareGPT {
		return "conversations"
	}
	return "messages"
}

// decode decodes one record. file and line locate it for generated ids.
func (d *decoder) decode(data []byte, rec *record) error {
	*rec = record{}
	sc := &d.sc
	sc.reset(data)
	if k := sc.kind(); k != "object" {
		return fmt.Errorf("(top level): expected object, got JSON %s", k)
	}
	var (
		haveID           bool
		sharegpt, openai []conv.Message
		sgDrop, oaDrop   int
		sgTurns, oaTurns int
		sgSeen, oaSeen   bool
	)
	err := sc.object(func(key []byte) error {
		switch string(key) {
		case "id":
			id, err := d.id()
			if err != nil {
				return fmt.Errorf("id: %w", err)
			}
			rec.id, haveID = id, id != ""
		case "conversations", "conversation":
			msgs, turns, dropped, err := d.messages(string(key))
			if err != nil {
				return err
			}
			sharegpt, sgTurns, sgDrop, sgSeen = msgs, turns, dropped, true
		case "messages":
			msgs, turns, dropped, err := d.messages("messages")
			if err != nil {
				return err
			}
			openai, oaTurns, oaDrop, oaSeen = msgs, turns, dropped, true
		case "system", "system_prompt":
			if null, err := sc.isNull(); null || err != nil {
				return err
			}
			if sc.kind() != "string" {
				return fmt.Errorf("%s: expected string, got JSON %s", key, sc.kind())
			}
			s, err := sc.str()
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if rec.system == "" || string(key) == "system" {
				rec.system = s
			}
		case "tools":
			raw, err := sc.raw()
			if err != nil {
				return err
			}
			if k := sc.kindOf(raw); k != "array" && k != "string" && k != "null" {
				return fmt.Errorf("tools: expected array or string, got JSON %s", k)
			}
			if rec.tools, err = parseTools(raw); err != nil {
				return err
			}
		default:
			return sc.skip()
		}
		return nil
	})
	if err == nil {
		err = sc.end()
	}
	if err != nil {
		return err
	}
	want := d.format
	if want == SchemaAuto {
		switch {
		case sgSeen:
			want = SchemaShareGPT
		case oaSeen && d.list:
			want = SchemaVLLM
		case oaSeen:
			want = SchemaOpenAI
		default:
			return errNoFormatKey
		}
	}
	switch {
	case want == SchemaShareGPT && sgSeen:
		rec.msgs, rec.turns, rec.dropped = sharegpt, sgTurns, sgDrop
	case want != SchemaShareGPT && oaSeen:
		rec.msgs, rec.turns, rec.dropped = openai, oaTurns, oaDrop
	default:
		return fmt.Errorf("%s: missing (input read as %s)", listKey(want), want)
	}
	d.format, rec.format = want, want
	if !haveID {
		rec.id = ""
	}
	if sc.repaired > 0 {
		// Rare: find the field for the warning (or the error, --strict).
		if rec.badText = conv.CheckUTF8(data); rec.badText == nil {
			rec.badText = errors.New("invalid UTF-8")
		}
	}
	return nil
}

// id decodes an id: a string, or a number kept as its JSON text.
func (d *decoder) id() (string, error) {
	sc := &d.sc
	switch sc.kind() {
	case "string":
		return sc.str()
	case "number":
		return sc.rawNumber()
	case "null":
		return "", sc.literal("null")
	}
	return "", fmt.Errorf("expected string or number, got JSON %s", sc.kind())
}

// messages decodes the message list under key (ShareGPT turns or OpenAI
// messages; both accept either spelling of the role and text keys). It
// returns the messages kept, the number in the source and the number
// dropped.
func (d *decoder) messages(key string) (msgs []conv.Message, turns, dropped int, err error) {
	sc := &d.sc
	if null, err := sc.isNull(); null || err != nil {
		return nil, 0, 0, err
	}
	if k := sc.kind(); k != "array" {
		return nil, 0, 0, fmt.Errorf("%s: expected array, got JSON %s", key, k)
	}
	d.calls.reset()
	err = sc.array(func(i int) error {
		turns++
		m, drop, err := d.message()
		if err != nil {
			return fmt.Errorf("%s[%d]%w", key, i, err)
		}
		if drop {
			dropped++
			return nil
		}
		msgs = append(msgs, m)
		return nil
	})
	return msgs, turns, dropped, err
}

// message decodes one turn: {"from"|"role": ..., "value"|"content"|"text": ...}.
// drop reports a tool/function message. Errors start with ".field: " or
// ": " so that the caller can prefix the path "key[i]".
func (d *decoder) message() (conv.Message, bool, error) {
	sc := &d.sc
	if k := sc.kind(); k != "object" {
		return conv.Message{}, false, fmt.Errorf(": expected object, got JSON %s", k)
	}
	var (
		m                  conv.Message
		role, roleKey      string
		textKey            string
		haveRole, haveText bool
		toolCalls          []byte
	)
	err := sc.object(func(key []byte) error {
		switch k := messageKey(key); k {
		case "from", "role":
			if sc.kind() != "string" {
				return fmt.Errorf("%s: expected string, got JSON %s", k, sc.kind())
			}
			b, err := sc.rawString()
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			r := internRole(b)
			if !haveRole || k == "from" || roleKey != "from" {
				role, roleKey, haveRole = r, k, true
			}
		case "value", "content":
			text, err := d.content(k)
			if err != nil {
				return err
			}
			if !haveText || k == "value" || textKey != "value" {
				m.Content, textKey, haveText = text, k, true
			}
		case "tool_calls":
			raw, err := sc.raw()
			if err != nil {
				return err
			}
			if string(raw) != "null" {
				toolCalls = raw
			}
		case "tool_call_id":
			if null, err := sc.isNull(); null || err != nil {
				return err
			}
			if sc.kind() != "string" {
				return fmt.Errorf("tool_call_id: expected string, got JSON %s", sc.kind())
			}
			id, err := sc.str()
			if err != nil {
				return fmt.Errorf("tool_call_id: %w", err)
			}
			m.ToolCallID = id
		default:
			return sc.skip()
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, errSyntax) {
			return m, false, fmt.Errorf(": %w", err)
		}
		return m, false, fmt.Errorf(".%w", err)
	}
	if !haveRole {
		return m, false, errors.New(`.from: missing (no "from" or "role" key)`)
	}
	r, ok := mapRole(role)
	if !ok {
		return m, false, fmt.Errorf(".%s: %q is not a known role (%s)", roleKey, role, knownRoles)
	}
	switch r {
	case roleTool:
		if m.ToolCallID == "" {
			return m, true, nil
		}
		m.Role = conv.RoleTool
		return m, false, nil
	case roleFunctionCall:
		calls, err := d.calls.functionCalls(m.Content)
		if err != nil {
			return m, false, fmt.Errorf(".%w", err)
		}
		return conv.Message{Role: conv.RoleAssistant, ToolCalls: calls}, false, nil
	case roleObservation:
		id, err := d.calls.observation()
		if err != nil {
			return m, false, fmt.Errorf(".%w", err)
		}
		m.Role, m.ToolCallID = conv.RoleTool, id
		return m, false, nil
	}
	m.Role = r
	if m.ToolCallID != "" {
		return m, false, fmt.Errorf(".tool_call_id: only a tool message answers a call, not %s", role)
	}
	if toolCalls != nil {
		if r != conv.RoleAssistant {
			return m, false, fmt.Errorf(".tool_calls: only an assistant message has tool calls, not %s", role)
		}
		calls, err := openAIToolCalls(toolCalls)
		if err != nil {
			return m, false, fmt.Errorf(".%w", err)
		}
		m.ToolCalls = calls
	}
	return m, false, nil
}

// messageKey returns the message keys the decoder reads as constants, so
// that naming them allocates nothing, and "" for any other key.
func messageKey(key []byte) string {
	for _, k := range [...]string{"from", "value", "role", "content", "tool_calls", "tool_call_id"} {
		if string(key) == k {
			return k
		}
	}
	return ""
}

// roleNames are the common role spellings, shared by every message
// instead of allocated for each.
var roleNames = [...]string{"human", "gpt", "user", "assistant", "system", "tool", "function", "model"}

// internRole returns the role b as a string, allocating only for rare
// spellings.
func internRole(b []byte) string {
	for _, r := range roleNames {
		if string(b) == r {
			return r
		}
	}
	return string(b)
}

// content decodes message text: a string, null (empty), or OpenAI content
// parts [{"type":"text","text":"..."}], whose text parts are joined with
// "\n" and whose other parts (images, audio) are ignored.
func (d *decoder) content(key string) (string, error) {
	sc := &d.sc
	switch sc.kind() {
	case "string":
		s, err := sc.str()
		if err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return s, nil
	case "null":
		return "", sc.literal("null")
	case "array":
		return d.parts(key)
	}
	return "", fmt.Errorf("%s: expected string or array of content parts, got JSON %s", key, sc.kind())
}
