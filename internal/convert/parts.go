package convert

import (
	"fmt"
	"slices"

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
	c      conv.Conversation
	file   string
	line   int
	tools  int
	suffix bool
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
	} else if m.mode != PartsNone && rec.format == FormatShareGPT {
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

// merge sorts a group's parts by part number (numerically; a record with
// no suffix first; ties keep input order), drops repeated part ids (the
// later copy; the count is returned) and concatenates the messages.
// Same-role messages meeting at a part boundary are left for the
// alternation step to merge or reject.
func (g *group) merge() (it item, dupParts int) {
	slices.SortStableFunc(g.parts, func(a, b part) int {
		if a.num != b.num {
			return a.num - b.num
		}
		return a.seen - b.seen
	})
	first := g.parts[0].rec
	it = item{file: first.file, line: first.line, suffix: g.suffix}
	var ids []string
	n := 0
	for _, p := range g.parts {
		n += len(p.rec.msgs)
	}
	msgs := make([]conv.Message, 0, n)
	for i, p := range g.parts {
		if i > 0 && p.rec.id == g.parts[i-1].rec.id {
			dupParts++
			continue
		}
		ids = append(ids, p.rec.id)
		msgs = append(msgs, p.rec.msgs...)
		it.tools += p.rec.tools
	}
	id := g.base
	if !g.suffix {
		id = first.id
	}
	meta := map[string]any{"source": string(first.format)}
	if g.suffix {
		meta["parts"] = ids
	}
	it.c = conv.Conversation{ID: id, Messages: msgs, Meta: meta}
	return it, dupParts
}
