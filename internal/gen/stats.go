package gen

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
)

// Stats collects the distributions of what was generated for the
// describe table that print_stats / --stats prints (the columns of
// pandas' describe with vLLM's percentiles).
type Stats struct {
	// Per conversation.
	Turns        []float64 // messages, system message excluded (vLLM's num_turns)
	CommonPrefix []float64
	Prefix       []float64
	// Per message.
	Input   []float64 // user message tokens
	Output  []float64 // assistant target tokens
	Request []float64 // prompt tokens of each request: history + this message
	// Wraps is how many times the corpus walk started over.
	Wraps int
	// Messages counts the user and assistant messages, Repeated those
	// whose text is the same as an earlier message's (issue 23), Redrawn
	// those the generator drew again because they started like an earlier
	// message.
	Messages, Repeated, Redrawn int
	texts                       map[uint64]struct{}
}

// Add records one conversation.
func (s *Stats) Add(c *conv.Conversation) {
	turns, history := 0, 0
	if s.texts == nil {
		s.texts = map[uint64]struct{}{}
	}
	for _, m := range c.Messages {
		if m.Role == conv.RoleUser || m.Role == conv.RoleAssistant {
			s.Messages++
			h := fnv.New64a()
			h.Write([]byte(m.Content))
			k := h.Sum64()
			if _, dup := s.texts[k]; dup {
				s.Repeated++
			}
			s.texts[k] = struct{}{}
		}
		switch m.Role {
		case conv.RoleSystem:
			history += m.Tokens
		case conv.RoleUser:
			turns++
			history += m.Tokens
			s.Input = append(s.Input, float64(m.Tokens))
			s.Request = append(s.Request, float64(history))
		case conv.RoleAssistant:
			turns++
			history += m.OutputTokens
			s.Output = append(s.Output, float64(m.OutputTokens))
		}
	}
	s.Turns = append(s.Turns, float64(turns))
	s.CommonPrefix = append(s.CommonPrefix, metaNum(c.Meta["common_prefix_tokens"]))
	s.Prefix = append(s.Prefix, metaNum(c.Meta["prefix_tokens"]))
}

func metaNum(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// Print writes the describe table.
func (s *Stats) Print(w io.Writer) error {
	rows := []struct {
		name string
		v    []float64
	}{
		{"num_turns", s.Turns},
		{"common_prefix_tokens", s.CommonPrefix},
		{"prefix_tokens", s.Prefix},
		{"input_tokens", s.Input},
		{"output_tokens", s.Output},
		{"request_tokens", s.Request},
	}
	cols := []string{"count", "mean", "std", "min", "25%", "50%", "75%", "90%", "99%", "max"}
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s", "")
	for _, c := range cols {
		fmt.Fprintf(&b, " %10s", c)
	}
	b.WriteByte('\n')
	for _, r := range rows {
		d := Describe(r.v)
		fmt.Fprintf(&b, "%-20s %10d", r.name, d.Count)
		for _, x := range []float64{d.Mean, d.Std, d.Min, d.P25, d.P50, d.P75, d.P90, d.P99, d.Max} {
			fmt.Fprintf(&b, " %10.2f", x)
		}
		b.WriteByte('\n')
	}
	b.WriteString("num_turns: messages per conversation (user and assistant, as vLLM counts turns); input_tokens: per user message; output_tokens: per assistant reply; request_tokens: per request (user turn), history included\n")
	fmt.Fprintf(&b, "corpus wraps: %d\n", s.Wraps)
	fmt.Fprintf(&b, "repeated texts: %d of %d messages (%d drawn again to keep them apart)\n", s.Repeated, s.Messages, s.Redrawn)
	_, err := io.WriteString(w, b.String())
	return err
}

// Description is one row of the describe table.
type Description struct {
	Count                                        int
	Mean, Std, Min, P25, P50, P75, P90, P99, Max float64
}

// Describe summarises v as pandas' describe does: sample standard
// deviation (n-1), quantiles by linear interpolation between order
// statistics. An empty v gives NaNs.
func Describe(v []float64) Description {
	d := Description{Count: len(v)}
	if len(v) == 0 {
		nan := math.NaN()
		d.Mean, d.Std, d.Min, d.P25, d.P50, d.P75, d.P90, d.P99, d.Max = nan, nan, nan, nan, nan, nan, nan, nan, nan
		return d
	}
	x := append([]float64(nil), v...)
	sort.Float64s(x)
	sum := 0.0
	for _, f := range x {
		sum += f
	}
	d.Mean = sum / float64(len(x))
	if len(x) > 1 {
		ss := 0.0
		for _, f := range x {
			dev := f - d.Mean
			ss += float64(dev * dev)
		}
		d.Std = math.Sqrt(ss / float64(len(x)-1))
	} else {
		d.Std = math.NaN()
	}
	q := func(p float64) float64 {
		h := float64(len(x)-1) * p
		lo := int(math.Floor(h))
		if lo+1 >= len(x) {
			return x[len(x)-1]
		}
		return x[lo] + float64((h-float64(lo))*(x[lo+1]-x[lo]))
	}
	d.Min, d.Max = x[0], x[len(x)-1]
	d.P25, d.P50, d.P75, d.P90, d.P99 = q(0.25), q(0.5), q(0.75), q(0.9), q(0.99)
	return d
}
