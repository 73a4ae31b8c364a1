package convert

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
)

// PartsMode says how ShareGPT records whose ids carry a part suffix
// ("abc_0", "abc_1", ...) are merged into one conversation.
type PartsMode string

// Part merging modes.
const (
	// PartsAdjacent merges runs of consecutive records sharing a base id,
	// in numeric part order, streaming: memory holds one run. A part whose
	// base id was already written is dropped (part_not_adjacent).
	PartsAdjacent PartsMode = "adjacent"
	// PartsAll holds every record until the end of the input stream and
	// merges all parts of an id wherever they are; memory grows with the
	// whole dataset.
	PartsAll PartsMode = "all"
	// PartsNone keeps every record as its own conversation, id unchanged.
	PartsNone PartsMode = "none"
)

// ParsePartsMode parses a --parts value.
func ParsePartsMode(s string) (PartsMode, error) {
	switch m := PartsMode(s); m {
	case PartsAdjacent, PartsAll, PartsNone:
		return m, nil
	case "":
		return PartsAdjacent, nil
	}
	return "", fmt.Errorf("parts mode %q: want adjacent, all or none", s)
}

// part is one record of a group, with its parsed part number (-1: none).
type part struct {
	rec  record
	num  int
	seen int // arrival order, for a stable sort
}

// group is the records that merge into one conversation.
type group struct {
	base   string
	suffix bool // some record had a part suffix
	parts  []part
}

// item is a merged conversation on its way through the filters.
type item struct {
	c       conv.Conversation
	file    string
	line    int
	dropped int // tool/function messages dropped while decoding
	// base is the base id; first the part number of the first part (-1:
	// none) and end the part number a continuation would have; head and
	// tail hash the first and last source messages.
	base       string
	first, end int
	head, tail uint64
}

// hashSeed seeds messageHash for the process.
var hashSeed = maphash.MakeSeed()

// messageHash hashes a message's role and content.
func messageHash(msgs []conv.Message, i int) uint64 {
	if i < 0 || i >= len(msgs) {
		return 0
	}
	return maphash.String(hashSeed, msgs[i].Role) ^ maphash.String(hashSeed, msgs[i].Content)*31
}

// merger groups records by base id according to its mode and hands
// finished groups to emit.
type merger struct {
	mode  PartsMode
	cur   *group
	all   map[string]*group
	order []*group
	seq   int
	emit  func(*group) error
}

// add takes the next record in input order.
func (m *merger) add(rec record) error {
	base, num := rec.id, -1
	if rec.id == "" {
		base = fmt.Sprintf("%s:%d", rec.file, rec.line)
		rec.id = base
	} else if m.mode != PartsNone && rec.format == SchemaShareGPT {
		base, num = splitPart(rec.id)
	}
	m.seq++
	p := part{rec: rec, num: num, seen: m.seq}
	switch m.mode {
	case PartsAll:
		g := m.all[base]
		if g == nil {
			if m.all == nil {
				m.all = map[string]*group{}
			}
			g = &group{base: base}
			m.all[base] = g
			m.order = append(m.order, g)
		}
		g.add(p)
		return nil
	case PartsAdjacent:
		if m.cur != nil && m.cur.base == base && num >= 0 {
			m.cur.add(p)
			return nil
		}
	}
	if err := m.flush(); err != nil {
		return err
	}
	m.cur = &group{base: base}
	m.cur.add(p)
	return nil
}

func (g *group) add(p part) {
	g.parts = append(g.parts, p)
	if p.num >= 0 {
		g.suffix = true
	}
}

// flush emits the pending group(s); call it at the end of the stream.
func (m *merger) flush() error {
	if m.cur != nil {
		g := m.cur
		m.cur = nil
		if err := m.emit(g); err != nil {
			return err
		}
	}
	for i, g := range m.order {
		m.order[i] = nil
		delete(m.all, g.base)
		if err := m.emit(g); err != nil {
			return err
		}
	}
	m.order = m.order[:0]
	return nil
}

// mergeStats counts what merging did to one group.
type mergeStats struct {
	dupParts int // repeated part ids dropped
	joined   int // parts joined to the part before them
	overlaps int // repeated boundary messages removed
	separate int // parts kept apart from the part before them
}

// merge sorts a group's parts by part number (numerically; a record with
// no suffix first; ties keep input order), drops repeated part ids (the
// later copy) and chains each part to the one before it when it continues
// it (see continuation); each chain is one conversation, handed to emit
// with its index in the group. A chain of several parts that starts at
// the group's first part takes the base id; any other conversation keeps
// the id of its first record. Same-role messages meeting at a part
// boundary are left for the alternation step. A record's messages are
// owned by its group: they are joined in place.
func (g *group) merge(emit func(it item, i int) error) (st mergeStats, err error) {
	slices.SortStableFunc(g.parts, func(a, b part) int {
		if a.num != b.num {
			return a.num - b.num
		}
		return a.seen - b.seen
	})
	var buf [4]part
	chain := buf[:0]
	var msgs []conv.Message
	n := 0
	flush := func() error {
		if len(chain) == 0 {
			return nil
		}
		it := g.item(chain, msgs)
		chain, msgs = chain[:0], nil
		n++
		return emit(it, n-1)
	}
	for i, p := range g.parts {
		if i > 0 && p.rec.id == g.parts[i-1].rec.id {
			st.dupParts++
			continue
		}
		if len(chain) > 0 {
			if skip, ok := continuation(chain[len(chain)-1], p); ok {
				next := p.rec.msgs
				if skip > 0 {
					// The previous part's last message is replaced by the
					// repeat when the repeat is longer (it holds it).
					if last := &msgs[len(msgs)-1]; len(next[0].Content) > len(last.Content) {
						*last = next[0]
					}
					next = next[skip:]
					st.overlaps++
				}
				st.joined++
				chain = append(chain, p)
				uniqueCallIDs(msgs, next, p.num)
				msgs = append(msgs, next...)
				continue
			}
			st.separate++
			if err := flush(); err != nil {
				return st, err
			}
		}
		chain = append(chain, p)
		msgs = p.rec.msgs
	}
	return st, flush()
}

// uniqueCallIDs renames the tool calls of next (a part joined to msgs)
// whose ids msgs already uses, and the results answering them, by adding
// "_p" and the part number: every part numbers its calls from call_1.
func uniqueCallIDs(msgs, next []conv.Message, part int) {
	if !callsCollide(msgs, next) {
		return
	}
	suffix := "_p" + strconv.Itoa(part)
	for i := range next {
		m := &next[i]
		for j := range m.ToolCalls {
			m.ToolCalls[j].ID += suffix
		}
		if m.ToolCallID != "" {
			m.ToolCallID += suffix
		}
	}
}

// callsCollide reports whether a tool call of next has an id used in msgs.
func callsCollide(msgs, next []conv.Message) bool {
	var used map[string]bool
	for _, m := range next {
		for _, c := range m.ToolCalls {
			if used == nil {
				used = map[string]bool{}
				for _, old := range msgs {
					for _, oc := range old.ToolCalls {
						used[oc.ID] = true
					}
				}
			}
			if used[c.ID] {
				return true
			}
		}
	}
	return false
}

// continuation reports whether part b continues part a, the part before
// it in part order, and how many leading messages of b repeat the end of
// a. ShareGPT dumps were split by FastChat's split_long_conversation.py,
// which names each part after the index of its first message in the
// whole conversation ("abc_0", "abc_11", "abc_17"): b continues a when b's
// number is a's number plus a's message count, or that minus one when b's
// first message
// repeats a's last one (the splitter used for ShareGPT V3 put the
// boundary assistant message in both parts; it may also repeat only the
// tail of it, or a longer version of it). Anything else (FastChat-style
// "identity_0", "identity_1" numbering of separate conversations, a
// missing part) is not a continuation.
func continuation(a, b part) (skip int, ok bool) {
	if a.num < 0 || b.num < 0 || len(a.rec.msgs) == 0 || len(b.rec.msgs) == 0 {
		return 0, false
	}
	end := a.num + a.rec.turns
	first, last := b.rec.msgs[0], a.rec.msgs[len(a.rec.msgs)-1]
	switch b.num {
	case end:
		return 0, true
	case end - 1:
		if first.Role == last.Role && repeats(last.Content, first.Content) {
			return 1, true
		}
	}
	return 0, false
}

// repeats reports whether b repeats a: equal, a tail of a, or a longer
// text that starts with a. Empty texts repeat nothing.
func repeats(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return a == b || strings.HasSuffix(a, b) || strings.HasPrefix(b, a)
}

// item builds the conversation of one chain of parts.
func (g *group) item(chain []part, msgs []conv.Message) item {
	first := chain[0].rec
	it := item{file: first.file, line: first.line, base: g.base, first: chain[0].num}
	last := chain[len(chain)-1]
	it.end = last.num + last.rec.turns
	if it.first >= 0 {
		it.head = messageHash(first.msgs, 0)
		it.tail = messageHash(last.rec.msgs, len(last.rec.msgs)-1)
	}
	id := first.id
	meta := map[string]any{"source": string(first.format)}
	if len(chain) > 1 {
		ids := make([]string, len(chain))
		for i, p := range chain {
			ids[i] = p.rec.id
			it.dropped += p.rec.dropped
		}
		meta["parts"] = ids
		if chain[0].seen == g.parts[0].seen {
			id = g.base
		}
	} else {
		it.dropped = first.dropped
	}
	if sys := first.system; sys != "" && (len(msgs) == 0 || msgs[0].Role != conv.RoleSystem || msgs[0].Content != sys) {
		msgs = append([]conv.Message{{Role: conv.RoleSystem, Content: sys}}, msgs...)
	}
	it.c = conv.Conversation{ID: id, Messages: msgs, Tools: first.tools, Meta: meta}
	return it
}
