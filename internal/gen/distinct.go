package gen

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/synth"
)

// keyBytes is how much of a message's own text (after a prefix shared on
// purpose) two messages must not share: a shared start is a prefix-cache
// hit across conversations that nobody asked for.
const keyBytes = 256

// redrawTries bounds the windows tried for one repeated message.
const redrawTries = 32

// distinct keeps the text of every generated message apart from every
// earlier one's (issue 23): the corpus walk never realigns its windows,
// but a window the exact-count adjustment shifted, or a passage the corpus
// holds twice, can still start like another message; such a message is
// drawn again from a random corpus window. It runs in conversation order,
// so the output stays deterministic.
type distinct struct {
	tok  Tokenizer
	text string
	rng  *rand.Rand
	src  *synth.Stream // the whole corpus, encoded on first use
	seen map[uint64]struct{}
	// redrawn counts the messages drawn again, repeated those still
	// starting like an earlier message after redrawTries windows.
	redrawn, repeated int
}

func newDistinct(tok Tokenizer, text string, seed uint64) *distinct {
	return &distinct{tok: tok, text: text, rng: rand.New(rand.NewPCG(seed, streamRedraw)), seen: map[uint64]struct{}{}}
}

func textKey(s string) uint64 {
	if len(s) > keyBytes {
		s = s[:keyBytes]
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// check draws again every message of j's conversation that starts like an
// earlier message, and remembers the starts of all of them.
func (d *distinct) check(j *job) error {
	user := 0
	for i := range j.conv.Messages {
		m := &j.conv.Messages[i]
		head, headN, t := "", 0, user
		switch m.Role {
		case conv.RoleUser:
			if user == 0 {
				head, headN = j.head, j.headN
			}
			user++
		case conv.RoleAssistant:
			t = user - 1
		default:
			continue
		}
		if len(m.Content) == len(head) {
			continue // no text of its own
		}
		k := textKey(m.Content[len(head):])
		for try := 0; ; try++ {
			if _, dup := d.seen[k]; !dup {
				break
			}
			if try == redrawTries {
				d.repeated++
				break
			}
			if ok, err := d.redraw(j, m, head, headN, t); err != nil {
				return err
			} else if !ok {
				d.repeated++ // the corpus is shorter than the message
				break
			}
			if try == 0 {
				d.redrawn++
			}
			k = textKey(m.Content[len(head):])
		}
		d.seen[k] = struct{}{}
	}
	return nil
}

// redraw makes m's text again, the same number of tokens, from a random
// window of the corpus; false if the corpus is shorter than the window.
func (d *distinct) redraw(j *job, m *conv.Message, head string, headN, t int) (bool, error) {
	if d.src == nil {
		d.src = synth.NewStream(d.tok, d.text)
		d.src.Ensure(len(d.text) + 1)
	}
	ids := d.src.IDs()
	window := func(n int) []int {
		p := d.rng.IntN(len(ids) - n + 1)
		return ids[p : p+n : p+n]
	}
	if m.Role == conv.RoleAssistant {
		if j.outN[t] > len(ids) {
			return false, nil
		}
		m.Content = synth.DecodeValid(d.tok, window(j.outN[t]))
		return true, nil
	}
	target := j.userN[t]
	if t == 0 {
		target = max(target, headN)
	}
	fill := max(target-headN, 0)
	if fill+slack(fill) > len(ids) {
		return false, nil
	}
	text, n, err := synth.ExactText(d.tok, head, headN, window(fill+slack(fill)), target)
	if err != nil {
		return false, err
	}
	m.Content, m.Tokens = text, n
	return true, nil
}
