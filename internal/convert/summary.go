package convert

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Summary is what a Run read, dropped and wrote.
type Summary struct {
	// Inputs is the number of inputs read; Formats counts them by the
	// record format detected (or forced).
	Inputs  int
	Formats map[Schema]int
	// Bytes is the decompressed input size read.
	Bytes int64
	// Records is the number of well-formed records read (ShareGPT parts
	// count one each); Malformed the number skipped as malformed.
	Records   int
	Malformed int
	// Repaired counts the records read whose invalid UTF-8 (or unpaired
	// surrogate escapes) became U+FFFD; each is warned about, and with
	// Strict it is an error, as mtrun makes it.
	Repaired int
	// DuplicateParts counts records dropped because the same source id
	// already appeared among the parts of the conversation being merged.
	DuplicateParts int
	// PartsJoined counts records joined to the part before them (ShareGPT
	// splits of one conversation), PartOverlaps the repeated boundary
	// messages removed while joining, and PartsSeparate the records kept
	// apart from the part before them with the same base id because they
	// do not continue it (e.g. FastChat's "identity_N").
	PartsJoined, PartOverlaps, PartsSeparate int
	// Conversations is the number of conversations after part merging,
	// each either written or dropped for one reason.
	Conversations int
	Written       int
	Dropped       map[Reason]int
	// Removed counts messages removed from or merged within conversations.
	Removed MessageStats
	// Messages written by role, and conversations written that end with
	// a user message (replayed without a reference answer for that turn).
	System, User, Assistant, Tool int
	EndsWithUser                  int
	// Turns is the number of non-system messages per written conversation.
	Turns Counts
	// Tokenizer names the tokenizer of the token counts, "" if none.
	Tokenizer string
	// Token counts per user message, per assistant message and per
	// conversation (all its messages), in written conversations.
	UserTokens, AssistantTokens, ConversationTokens Counts
}

func newSummary() *Summary {
	return &Summary{Formats: map[Schema]int{}, Dropped: map[Reason]int{}}
}

// DroppedTotal returns the number of conversations dropped.
func (s *Summary) DroppedTotal() int {
	n := 0
	for _, v := range s.Dropped {
		n += v
	}
	return n
}

// Write prints the summary as aligned text (for stderr).
func (s *Summary) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var formats []string
	for _, f := range []Schema{SchemaShareGPT, SchemaOpenAI, SchemaVLLM} {
		if n := s.Formats[f]; n > 0 {
			formats = append(formats, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(formats) == 0 {
		formats = append(formats, "no records")
	}
	fmt.Fprintf(tw, "inputs\t%d (%s), %.1f MB\n", s.Inputs, strings.Join(formats, ", "), float64(s.Bytes)/1e6)
	fmt.Fprintf(tw, "records\t%d read, %d malformed, %d duplicate parts\n", s.Records, s.Malformed, s.DuplicateParts)
	if s.Repaired > 0 {
		fmt.Fprintf(tw, "repaired\t%d records with invalid UTF-8 (now U+FFFD)\n", s.Repaired)
	}
	fmt.Fprintf(tw, "parts\t%d joined to the part before them (%d repeated boundary messages removed), %d kept separate (same base id, not a continuation)\n",
		s.PartsJoined, s.PartOverlaps, s.PartsSeparate)
	fmt.Fprintf(tw, "conversations\t%d after merging parts: %d written, %d dropped\n", s.Conversations, s.Written, s.DroppedTotal())
	for _, r := range Reasons {
		if n := s.Dropped[r]; n > 0 {
			fmt.Fprintf(tw, "  dropped %s\t%d\n", r, n)
		}
	}
	fmt.Fprintf(tw, "messages\t%d written (system %d, user %d, assistant %d, tool %d); %d conversations end with a user message\n",
		s.System+s.User+s.Assistant+s.Tool, s.System, s.User, s.Assistant, s.Tool, s.EndsWithUser)
	r := s.Removed
	fmt.Fprintf(tw, "removed\t%d empty, %d system, %d tool, %d leading assistant, %d truncated; %d merged into the previous message\n",
		r.Empty, r.System, r.Tool, r.LeadingAssistant, r.Truncated, r.Merged)
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Written == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%-28s %8s %9s %8s %8s %8s %8s\n", "", "count", "mean", "p50", "p90", "p99", "max")
	dist(w, "messages per conversation", &s.Turns)
	if s.Tokenizer != "" {
		dist(w, "tokens per user message", &s.UserTokens)
		dist(w, "tokens per assistant message", &s.AssistantTokens)
		dist(w, "tokens per conversation", &s.ConversationTokens)
		_, err := fmt.Fprintf(w, "tokens counted with %s\n", s.Tokenizer)
		return err
	}
	return nil
}

func dist(w io.Writer, name string, c *Counts) {
	n := c.Len()
	if n == 0 {
		fmt.Fprintf(w, "%-28s %8d %9s %8s %8s %8s %8s\n", name, 0, "-", "-", "-", "-", "-")
		return
	}
	fmt.Fprintf(w, "%-28s %8d %9.1f %8.1f %8.1f %8.1f %8d\n", name, n, c.Mean(),
		c.Quantile(0.5), c.Quantile(0.9), c.Quantile(0.99), c.Max())
}

// Counts is an exact distribution of non-negative integers (turns, token
// counts) kept as a count per value: its memory grows with the number of
// distinct values, not with the number of conversations. The zero value
// is empty.
type Counts struct {
	small []int64       // small[v]: how many times v was added, v < countsSmall
	large map[int]int64 // the same for larger values
	n     int
	sum   float64
	max   int
}

// countsSmall bounds the values counted in Counts.small (128 KB at most).
const countsSmall = 1 << 14

// Add counts v once; a negative v counts as 0.
func (c *Counts) Add(v int) {
	v = max(v, 0)
	if v < countsSmall {
		if v >= len(c.small) {
			c.small = append(c.small, make([]int64, max(v+1, 2*len(c.small))-len(c.small))...)
			c.small = c.small[:min(cap(c.small), countsSmall)]
		}
		c.small[v]++
	} else {
		if c.large == nil {
			c.large = map[int]int64{}
		}
		c.large[v]++
	}
	c.n++
	c.sum += float64(v)
	c.max = max(c.max, v)
}

// Len returns the number of values added.
func (c *Counts) Len() int { return c.n }

// Mean returns the mean of the values, NaN if none.
func (c *Counts) Mean() float64 { return c.sum / float64(c.n) }

// Max returns the largest value, 0 if none.
func (c *Counts) Max() int { return c.max }

// Quantile is the linear interpolation between order statistics (pandas'
// default, R type 7), as over the sorted values; NaN if none.
func (c *Counts) Quantile(p float64) float64 {
	if c.n == 0 {
		return math.NaN()
	}
	h := float64(c.n-1) * p
	lo := math.Floor(h)
	i := int64(lo)
	if i+1 >= int64(c.n) {
		return float64(c.max)
	}
	x, y := c.nth(i), c.nth(i+1)
	return float64(x) + (h-lo)*float64(y-x)
}

// nth returns the value of rank i (0-based) in sorted order.
func (c *Counts) nth(i int64) int {
	for v, k := range c.small {
		if i < k {
			return v
		}
		i -= k
	}
	large := slices.Sorted(maps.Keys(c.large))
	for _, v := range large {
		if k := c.large[v]; i < k {
			return v
		} else {
			i -= k
		}
	}
	return c.max
}
