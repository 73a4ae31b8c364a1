package convert

import (
	"fmt"
	"io"
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
	Formats map[Format]int
	// Bytes is the decompressed input size read.
	Bytes int64
	// Records is the number of well-formed records read (ShareGPT parts
	// count one each); Malformed the number skipped as malformed.
	Records   int
	Malformed int
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
	Turns []int
	// Tokenizer names the tokenizer of the token counts, "" if none.
	Tokenizer string
	// Token counts per user message, per assistant message and per
	// conversation (all its messages), in written conversations.
	UserTokens, AssistantTokens, ConversationTokens []int
}

func newSummary() *Summary {
	return &Summary{Formats: map[Format]int{}, Dropped: map[Reason]int{}}
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
	for _, f := range []Format{FormatShareGPT, FormatOpenAI, FormatVLLM} {
		if n := s.Formats[f]; n > 0 {
			formats = append(formats, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(formats) == 0 {
		formats = append(formats, "no records")
	}
	fmt.Fprintf(tw, "inputs\t%d (%s), %.1f MB\n", s.Inputs, strings.Join(formats, ", "), float64(s.Bytes)/1e6)
	fmt.Fprintf(tw, "records\t%d read, %d malformed, %d duplicate parts\n", s.Records, s.Malformed, s.DuplicateParts)
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
	dist(w, "turns per conversation", s.Turns)
	if s.Tokenizer != "" {
		dist(w, "tokens per user message", s.UserTokens)
		dist(w, "tokens per assistant message", s.AssistantTokens)
		dist(w, "tokens per conversation", s.ConversationTokens)
		_, err := fmt.Fprintf(w, "tokens counted with %s\n", s.Tokenizer)
		return err
	}
	return nil
}

func dist(w io.Writer, name string, v []int) {
	if len(v) == 0 {
		fmt.Fprintf(w, "%-28s %8d %9s %8s %8s %8s %8s\n", name, 0, "-", "-", "-", "-", "-")
		return
	}
	x := slices.Clone(v)
	slices.Sort(x)
	sum := 0.0
	for _, n := range x {
		sum += float64(n)
	}
	fmt.Fprintf(w, "%-28s %8d %9.1f %8.1f %8.1f %8.1f %8d\n", name, len(x), sum/float64(len(x)),
		quantile(x, 0.5), quantile(x, 0.9), quantile(x, 0.99), x[len(x)-1])
}

// quantile is the linear interpolation between order statistics of sorted
// x (pandas' default, R type 7).
func quantile(x []int, p float64) float64 {
	h := float64(len(x)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(x) {
		return float64(x[len(x)-1])
	}
	return float64(x[i]) + (h-lo)*float64(x[i+1]-x[i])
}
