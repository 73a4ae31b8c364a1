package convert

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mtkit/mtkit/internal/conv"
)

// Reason is why a conversation was dropped.
type Reason string

// Drop reasons, in the order the checks run.
const (
	ReasonDuplicateID     Reason = "duplicate_id"      // id already written (--dedupe)
	ReasonPartNotAdjacent Reason = "part_not_adjacent" // part of an id already written (--parts adjacent)
	ReasonEmpty           Reason = "empty"             // no message left after cleaning
	ReasonNoUser          Reason = "no_user_message"   // nothing to replay
	ReasonAlternation     Reason = "alternation"       // roles do not alternate (--alternation drop)
	ReasonTooFewTurns     Reason = "too_few_turns"     // --min-turns
	ReasonTooShort        Reason = "content_too_short" // --min-content-len
	ReasonTooLong         Reason = "content_too_long"  // --max-content-len
	ReasonNonASCII        Reason = "non_ascii"         // --ascii-only
	ReasonNotSampled      Reason = "not_sampled"       // --max-items
)

// Reasons lists every drop reason in check order.
var Reasons = []Reason{
	ReasonDuplicateID, ReasonPartNotAdjacent, ReasonEmpty, ReasonNoUser,
	ReasonAlternation, ReasonTooFewTurns, ReasonTooShort, ReasonTooLong,
	ReasonNonASCII, ReasonNotSampled,
}

// Alternation is the policy for conversations whose roles do not
// alternate user/assistant.
type Alternation string

// Alternation policies.
const (
	// AlternationRepair merges consecutive same-role messages with "\n\n",
	// drops leading assistant messages and system messages that are not
	// at the start.
	AlternationRepair Alternation = "repair"
	// AlternationDrop drops every conversation that is not already
	// system? (user assistant)* user?.
	AlternationDrop Alternation = "drop"
)

// ParseAlternation parses an --alternation value.
func ParseAlternation(s string) (Alternation, error) {
	switch a := Alternation(s); a {
	case AlternationRepair, AlternationDrop:
		return a, nil
	case "":
		return AlternationRepair, nil
	}
	return "", fmt.Errorf("alternation %q: want repair or drop", s)
}

// MessageStats counts changes made to messages of conversations that
// reached the filters.
type MessageStats struct {
	Empty            int // empty or white-space-only messages removed
	System           int // system messages removed (--drop-system, or not leading under repair)
	Tool             int // tool/function messages (and unanswered tool calls) removed
	LeadingAssistant int // assistant messages before the first user message removed
	Merged           int // messages merged into the previous same-role message
	Truncated        int // messages cut by --max-turns
}

// filter applies cleaning, alternation and content filters.
type filter struct {
	opts *Options
}

// apply cleans c in place and returns the reason to drop it, or "".
func (f *filter) apply(c *conv.Conversation, st *MessageStats) Reason {
	o := f.opts
	msgs := c.Messages
	// 1. Empty and system messages.
	out := msgs[:0]
	for _, m := range msgs {
		switch {
		case !o.KeepEmpty && strings.TrimSpace(m.Content) == "" && len(m.ToolCalls) == 0 && m.Role != conv.RoleTool:
			st.Empty++
		case o.DropSystem && m.Role == conv.RoleSystem:
			st.System++
		default:
			out = append(out, m)
		}
	}
	msgs = out
	c.Messages = msgs
	if len(msgs) == 0 {
		return ReasonEmpty
	}
	if !hasRole(msgs, conv.RoleUser) {
		return ReasonNoUser
	}
	// 2. Alternation: system? (user assistant)* user?
	if o.Alternation == AlternationDrop {
		if !alternates(msgs) {
			c.Messages = msgs
			return ReasonAlternation
		}
	} else {
		msgs = repair(msgs, st)
	}
	c.Messages = msgs
	// 3. Turns (messages other than system, as vLLM counts them).
	turns := 0
	for _, m := range msgs {
		if m.Role != conv.RoleSystem {
			turns++
		}
	}
	if o.MinTurns > 0 && turns < o.MinTurns {
		return ReasonTooFewTurns
	}
	if o.MaxTurns > 0 && turns > o.MaxTurns {
		n := 0
		for i, m := range msgs {
			if m.Role != conv.RoleSystem {
				n++
			}
			if n > o.MaxTurns {
				st.Truncated += len(msgs) - i
				msgs = msgs[:i]
				break
			}
		}
		c.Messages = msgs
	}
	// 4. Content: every kept message must pass.
	for _, m := range msgs {
		if o.MinContentLen > 0 || o.MaxContentLen > 0 {
			n := utf8.RuneCountInString(m.Content)
			if o.MinContentLen > 0 && n < o.MinContentLen {
				return ReasonTooShort
			}
			if o.MaxContentLen > 0 && n > o.MaxContentLen {
				return ReasonTooLong
			}
		}
	}
	if o.ASCIIOnly {
		for _, m := range msgs {
			if !isASCII(m.Content) {
				return ReasonNonASCII
			}
		}
	}
	return ""
}

func hasRole(msgs []conv.Message, role string) bool {
	for _, m := range msgs {
		if m.Role == role {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// alternates reports whether msgs match system? (user answer)* user?,
// where an answer is an assistant message, or an assistant message with
// tool calls followed by one tool message per call and then an answer.
// A conversation may end after any tool message (its last answer
// missing, like one that ends with a user message) or after tool calls.
func alternates(msgs []conv.Message) bool {
	i := 0
	if msgs[0].Role == conv.RoleSystem {
		i = 1
	}
	prev := "" // role of the previous message; "call" for tool calls
	results := 0
	for ; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case conv.RoleUser:
			if prev != "" && prev != conv.RoleAssistant {
				return false
			}
		case conv.RoleAssistant:
			if prev != conv.RoleUser && !(prev == conv.RoleTool && results == 0) {
				return false
			}
		case conv.RoleTool:
			if (prev != "call" && prev != conv.RoleTool) || results == 0 {
				return false
			}
			results--
		default:
			return false
		}
		prev = m.Role
		if len(m.ToolCalls) > 0 {
			prev, results = "call", len(m.ToolCalls)
		}
	}
	return true
}

// repair makes msgs alternate: leading system messages are merged into
// one, later system messages removed, assistant messages before the first
// user message removed, tool messages that answer no call of the
// assistant message before them removed (counted as tool), and
// consecutive same-role messages merged with "\n\n" (tool messages are
// never merged; an assistant message merged into one with tool calls adds
// its calls).
func repair(msgs []conv.Message, st *MessageStats) []conv.Message {
	out := msgs[:0]
	leading := true // still in the leading system block
	seenUser := false
	calls := map[string]bool{} // ids of the calls the last assistant made
	for _, m := range msgs {
		if m.Role == conv.RoleTool {
			if !calls[m.ToolCallID] || (len(out) > 0 && out[len(out)-1].Role != conv.RoleTool && len(out[len(out)-1].ToolCalls) == 0) {
				st.Tool++
				continue
			}
			delete(calls, m.ToolCallID)
			out = append(out, m)
			continue
		}
		switch {
		case m.Role == conv.RoleSystem && !leading:
			st.System++
			continue
		case m.Role != conv.RoleSystem:
			leading = false
		}
		if m.Role == conv.RoleAssistant && !seenUser {
			st.LeadingAssistant++
			continue
		}
		seenUser = seenUser || m.Role == conv.RoleUser
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			prev := &out[n-1]
			switch {
			case prev.Content == "":
				prev.Content = m.Content
			case m.Content != "":
				prev.Content += "\n\n" + m.Content
			}
			prev.ToolCalls = append(prev.ToolCalls, m.ToolCalls...)
			st.Merged++
		} else {
			out = append(out, m)
		}
		if m.Role == conv.RoleAssistant {
			if n := len(out); n < 2 || out[n-2].Role != conv.RoleAssistant {
				clear(calls)
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
		}
	}
	return unansweredCalls(out, st)
}

// unansweredCalls removes the tool calls that the tool messages right
// after their assistant message do not answer (a chat server rejects
// them), except on the last message, and counts them as tool.
func unansweredCalls(msgs []conv.Message, st *MessageStats) []conv.Message {
	for i := range msgs[:max(len(msgs)-1, 0)] {
		m := &msgs[i]
		if len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for j := i + 1; j < len(msgs) && msgs[j].Role == conv.RoleTool; j++ {
			answered[msgs[j].ToolCallID] = true
		}
		kept := m.ToolCalls[:0]
		for _, c := range m.ToolCalls {
			if answered[c.ID] {
				kept = append(kept, c)
			} else {
				st.Tool++
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		m.ToolCalls = kept
	}
	return msgs
}
