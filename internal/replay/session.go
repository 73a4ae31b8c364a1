package replay

import (
	"encoding/json"
	"math"
	"sync/atomic"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/replay/openai"
)

// session is the replay state of one conversation.
type session struct {
	src    *conv.Conversation
	counts srcCounts // client token counts of src's messages (nil: none kept)
	id     string    // the id sent and recorded (fresh per loop pass)
	client int
	pos    int            // index in src.Messages of the next message to consume
	turn   int            // index of the next user turn
	hist   []conv.Message // what is sent: kept context + real answers
	tokens []int          // client token count per hist message (-1: unknown)
	// enc is the request JSON of hist[:len(enc)] (encoded when first sent).
	enc []json.RawMessage
	// transcript is every message sent or received, never trimmed.
	transcript []conv.Message
	// dropped counts messages the context guard removed from hist.
	dropped int
	// promptScale is the server's prompt tokens over the client's
	// estimate at the last successful turn (0: unknown); the context
	// guard scales its estimate by it (chat template, other tokenizer).
	promptScale float64
	// ready is when the next turn may be sent (its intended send time).
	ready   time.Time
	think   time.Duration // planned think time before the next turn
	cur     turnSpec      // the next turn, set by runner.prepare
	lastEnd time.Time     // end of the previous turn
	// free is when the session's client last became free to send
	// another conversation's turn: the end of the closed-loop lane's
	// previous request, or when an arrival took its --max-in-flight
	// slot (zero: only lastEnd applies). See clientWait.
	free   time.Time
	failed bool        // some turn failed after all retries
	ended  bool        // no more turns will be sent
	status string      // finished, failed, abandoned or unfinished
	aff    affinity    // what keeps the session's route
	plan   sessionPlan // what the schedule knows of it (plan.go)
}

// turnSpec is the next turn (request) of a session: the messages it adds
// to the history, and the dataset's answer to them.
type turnSpec struct {
	// user is the first message the turn sends: a user message, or the
	// first tool result answering the previous answer's tool calls.
	user conv.Message
	// more are the further tool results sent with the first one.
	more []conv.Message
	// at is the index of user in the source's messages (more follow it).
	at        int
	reference *conv.Message // the dataset's answer, if any
	maxTokens int
	// tokens are the client's token counts of input() once runTurn has
	// counted them (nil: not counted), so consume does not count again.
	tokens []int
}

// input returns the messages the turn adds before the answer.
func (t *turnSpec) input() []conv.Message {
	return append([]conv.Message{t.user}, t.more...)
}

// next advances to the next user message or run of tool results (one
// request per assistant message of the dataset), moving system messages
// and assistant messages that precede any user message into the history.
// It returns false when the conversation has no turn left.
func (s *session) next(o *Options) (turnSpec, bool) {
	msgs := s.src.Messages
	for s.pos < len(msgs) && msgs[s.pos].Role != conv.RoleUser && msgs[s.pos].Role != conv.RoleTool {
		// System messages, and dataset answers that have no user turn of
		// theirs (a conversation that starts with the assistant, or two
		// answers in a row), are context; with history "none" only the
		// system messages are.
		if s.src.History == conv.HistoryNone && msgs[s.pos].Role != conv.RoleSystem {
			s.transcript = append(s.transcript, wire(msgs[s.pos]))
		} else {
			s.push(s.pos, o)
		}
		s.pos++
	}
	if s.pos >= len(msgs) || (o.MaxTurns > 0 && s.turn >= o.MaxTurns) {
		return turnSpec{}, false
	}
	t := turnSpec{user: msgs[s.pos], at: s.pos}
	end := s.pos + 1
	for t.user.Role == conv.RoleTool && end < len(msgs) && msgs[end].Role == conv.RoleTool {
		t.more = append(t.more, msgs[end])
		end++
	}
	if end < len(msgs) && msgs[end].Role == conv.RoleAssistant {
		t.reference = &msgs[end]
	}
	t.maxTokens = o.outputTokens(t.reference, func() int { return s.countSrc(end, o) })
	return t, true
}

// lastTurn reports whether t, the current turn, is the conversation's
// last: no user message or tool result follows it, or --max-turns ends
// the conversation with it.
func (s *session) lastTurn(t turnSpec, o *Options) bool {
	if o.MaxTurns > 0 && s.turn+1 >= o.MaxTurns {
		return true
	}
	msgs := s.src.Messages
	next := s.pos + 1 + len(t.more)
	if t.reference != nil {
		next++
	}
	for _, m := range msgs[min(next, len(msgs)):] {
		if m.Role == conv.RoleUser || m.Role == conv.RoleTool {
			return false
		}
	}
	return true
}

// answer is what joins the history after a successful turn: the live
// answer's text, with the dataset's tool calls when the dataset's answer
// has any. The dataset's tool results that follow answer those calls (by
// their ids), so the live answer's own tool calls, if any, are not used.
func (t *turnSpec) answer(live string) conv.Message {
	m := conv.Message{Role: conv.RoleAssistant, Content: live}
	if t.reference != nil {
		m.ToolCalls = t.reference.ToolCalls
	}
	return m
}

// wire keeps the fields of m that are sent.
func wire(m conv.Message) conv.Message {
	return conv.Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
}

// newSession starts the replay of c, whose messages' client token counts
// are kept in counts (nil: none kept). The history, transcript, token
// counts and encoded messages start with room for all of c's messages
// (history and transcript in one block), not grown a turn at a time.
func newSession(c *conv.Conversation, counts srcCounts, id string, index int) *session {
	n := len(c.Messages)
	msgs := make([]conv.Message, 0, 2*n)
	return &session{
		src: c, counts: counts, id: id, plan: sessionPlan{index: index},
		hist: msgs[:0:n], transcript: msgs[n : n : 2*n],
		tokens: make([]int, 0, n), enc: make([]json.RawMessage, 0, n),
	}
}

// srcCounts holds the client token counts of one source conversation's
// messages (by index), shared by every session that replays it: with
// --loop each pass sends the same messages again, and counting them
// again cost about a seventh of mtrun's CPU per turn with 100-word
// messages (issue 26). An entry holds the text it counts and serves only
// that text, so a message changed since it was counted is counted anew.
type srcCounts []atomic.Pointer[countedText]

// countedText is a text and its client token count.
type countedText struct {
	text string
	n    int
}

// newSrcCounts returns the (empty) counts of c's messages.
func newSrcCounts(c *conv.Conversation) srcCounts {
	return make(srcCounts, len(c.Messages))
}

// countSrc is the client tokenizer's count of the content of message i
// of the session's source (-1: no tokenizer), counted once for all the
// sessions that share its counts.
func (s *session) countSrc(i int, o *Options) int {
	text := s.src.Messages[i].Content
	if o.Tokenizer == nil || i >= len(s.counts) {
		return o.count(text)
	}
	// Comparing the texts costs nothing when they are the same string
	// (the comparison stops at the pointers).
	if c := s.counts[i].Load(); c != nil && c.text == text {
		return c.n
	}
	n := o.Tokenizer.Count(text)
	s.counts[i].Store(&countedText{text: text, n: n})
	return n
}

// push appends message i of the session's source to the history.
func (s *session) push(i int, o *Options) {
	s.pushCounted(s.src.Messages[i], s.countSrc(i, o))
}

// pushCounted appends a message whose client token count is n (-1:
// unknown) to the history.
func (s *session) pushCounted(m conv.Message, n int) {
	m = wire(m)
	s.hist = append(s.hist, m)
	s.transcript = append(s.transcript, m)
	s.tokens = append(s.tokens, n)
}

// count is the client tokenizer's count of text (-1: no tokenizer).
func (o *Options) count(text string) int {
	if o.Tokenizer == nil {
		return -1
	}
	return o.Tokenizer.Count(text)
}

// consume marks the current user turn as sent, successfully or not. On
// success the user message and the model's answer (whose client token
// count is answerTokens; uncounted: not counted yet) join the history; on
// failure the history stays at the last successful context. With history
// "none" (each user message a whole prompt, as in traces) nothing joins
// it: every turn sends the system messages and its own message only.
func (s *session) consume(t turnSpec, answer *conv.Message, answerTokens int, o *Options) {
	s.pos += 1 + len(t.more)
	if t.reference != nil {
		s.pos++
	}
	s.turn++
	if answer != nil && s.src.History == conv.HistoryNone {
		for _, m := range t.input() {
			s.transcript = append(s.transcript, wire(m))
		}
		s.transcript = append(s.transcript, wire(*answer))
	} else if answer != nil {
		for i, m := range t.input() {
			if t.tokens != nil {
				s.pushCounted(m, t.tokens[i])
			} else {
				s.pushCounted(m, o.count(m.Content))
			}
		}
		if answerTokens == uncounted {
			answerTokens = o.count(answer.Content)
		}
		s.pushCounted(*answer, answerTokens)
	} else {
		// The failed messages were sent: they stay in the transcript,
		// not in the history.
		for _, m := range t.input() {
			s.transcript = append(s.transcript, wire(m))
		}
	}
}

// outputTokens is the max_tokens of a turn: the dataset's target, or the
// dataset answer's token count (count gives it), bounded by the limits;
// 0 leaves it unset.
func (o *Options) outputTokens(ref *conv.Message, count func() int) int {
	if o.FixedMaxTokens != 0 {
		return max(o.FixedMaxTokens, 0)
	}
	n := 0
	if ref != nil {
		n = ref.OutputTokens
		if n == 0 && o.Tokenizer != nil && ref.Content != "" {
			n = count()
		}
	}
	if o.LimitMaxTokens > 0 && (n == 0 || n > o.LimitMaxTokens) {
		n = o.LimitMaxTokens
	}
	if o.LimitMinTokens > 0 && n < o.LimitMinTokens {
		n = o.LimitMinTokens
	}
	return n
}

// uncounted marks a token count not computed yet.
const uncounted = -2

// messageOverhead is the client's estimate of the chat template's tokens
// per message (role markers, separators), used only by the context guard.
const messageOverhead = 8

// guard drops the oldest non-system history messages until the prompt
// (history + user message, estimated with the client tokenizer and scaled
// by promptScale) plus maxTokens fits maxLen. It returns the client's
// prompt estimate, unscaled.
func (s *session) guard(user conv.Message, userTokens, maxTokens, maxLen int) int {
	total := userTokens + messageOverhead
	for _, n := range s.tokens {
		total += max(n, 0) + messageOverhead
	}
	if maxLen <= 0 {
		return total
	}
	scaled := func(n int) int {
		if s.promptScale > 0 {
			return int(math.Ceil(float64(n) * s.promptScale))
		}
		return n
	}
	for scaled(total)+maxTokens > maxLen {
		i := 0
		for i < len(s.hist) && s.hist[i].Role == conv.RoleSystem {
			i++
		}
		if i >= len(s.hist) {
			break
		}
		// Drop a user message together with the answer that follows it
		// and, when that answer calls tools, their results and the next
		// answer, so no tool result is left without its call.
		j := i + 1
		for s.hist[i].Role == conv.RoleUser && j < len(s.hist) && s.hist[j].Role == conv.RoleAssistant {
			calls := len(s.hist[j].ToolCalls) > 0
			j++
			if !calls {
				break
			}
			for j < len(s.hist) && s.hist[j].Role == conv.RoleTool {
				j++
			}
		}
		for k := i; k < j; k++ {
			total -= max(s.tokens[k], 0) + messageOverhead
		}
		s.hist = append(s.hist[:i], s.hist[j:]...)
		s.tokens = append(s.tokens[:i], s.tokens[j:]...)
		if len(s.enc) > i {
			s.enc = append(s.enc[:i], s.enc[min(j, len(s.enc)):]...)
		}
		s.dropped += j - i
	}
	return total
}

// encoded returns the request JSON of every history message, encoding
// those not sent before.
func (s *session) encoded() ([]json.RawMessage, error) {
	for len(s.enc) < len(s.hist) {
		e, err := openai.EncodeMessage(s.hist[len(s.enc)])
		if err != nil {
			return nil, err
		}
		s.enc = append(s.enc, e)
	}
	return s.enc, nil
}

// output is the conversation as replayed: the history with real answers.
func (s *session) output() *conv.Conversation {
	// user_turns_sent counts requests; turns_sent is its old name, kept
	// for readers (deprecated): vLLM's turns are messages (issue 23).
	meta := map[string]any{"status": s.status, "source_id": s.src.ID, "user_turns_sent": s.turn, "turns_sent": s.turn}
	if s.dropped > 0 {
		meta["dropped_messages"] = s.dropped
	}
	for k, v := range s.src.Meta {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	return &conv.Conversation{ID: s.id, Messages: s.transcript, Tools: s.src.Tools, Meta: meta}
}
