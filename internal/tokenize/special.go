package tokenize

// matcher finds added (special) tokens in text: leftmost match first and,
// among matches starting at the same position, the longest, like the
// reference engine's Aho-Corasick in LeftmostLongest mode.
type matcher struct {
	first [256]bool   // first[b]: some token starts with byte b
	nodes []matchNode // trie; nodes[0] is the root
}

// matchNode is one trie node: its children by byte and the index of the
// token ending here (-1 if none).
type matchNode struct {
	next map[byte]int32
	tok  int32
}

// newMatcher builds a matcher over tokens; a match reports the index into
// tokens. Empty tokens are ignored.
func newMatcher(tokens []string) *matcher {
	m := &matcher{nodes: []matchNode{{tok: -1}}}
	for i, s := range tokens {
		if s == "" {
			continue
		}
		m.first[s[0]] = true
		n := int32(0)
		for j := 0; j < len(s); j++ {
			c := s[j]
			nx, ok := m.nodes[n].next[c]
			if !ok {
				if m.nodes[n].next == nil {
					m.nodes[n].next = make(map[byte]int32)
				}
				nx = int32(len(m.nodes))
				m.nodes[n].next[c] = nx
				m.nodes = append(m.nodes, matchNode{tok: -1})
			}
			n = nx
		}
		if m.nodes[n].tok < 0 {
			m.nodes[n].tok = int32(i)
		}
	}
	return m
}

// empty reports whether the matcher can match nothing.
func (m *matcher) empty() bool { return m == nil || len(m.nodes) == 1 }

// find returns the leftmost-longest match in s at or after from: its start,
// end and token index, or ok=false.
func (m *matcher) find(s string, from int) (start, end, tok int, ok bool) {
	if m.empty() {
		return 0, 0, 0, false
	}
	for i := from; i < len(s); i++ {
		if !m.first[s[i]] {
			continue
		}
		n, best, bestEnd := int32(0), int32(-1), 0
		for j := i; j < len(s); j++ {
			nx, ok := m.nodes[n].next[s[j]]
			if !ok {
				break
			}
			n = nx
			if t := m.nodes[n].tok; t >= 0 {
				best, bestEnd = t, j+1
			}
		}
		if best >= 0 {
			return i, bestEnd, int(best), true
		}
	}
	return 0, 0, 0, false
}
