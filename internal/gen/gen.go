// Package gen makes synthetic multi-turn conversations for benchmarking LLM
// serving: turn counts, prompt and answer lengths and think times drawn
// from seeded distributions, prompt text cut from a corpus so that every
// user message has exactly the requested number of tokens in a chosen
// tokenizer. It reads vLLM's generate_conversations JSON config
// (benchmarks/multi_turn) and fixes that generator's defects; see
// docs/mtgen.md.
//
// Output is deterministic: the same seed, config, corpus and tokenizer give
// byte-identical conversations on every machine and with any number of
// workers.
package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/dist"
	"github.com/mtkit/mtkit/internal/synth"
)

// Tokenizer is what the generator needs from a tokenizer;
// tokenize.Tokenizer satisfies it.
type Tokenizer = synth.Tokenizer

// EmbeddedCorpus returns the embedded corpus text (synth.EmbeddedCorpus).
func EmbeddedCorpus() string { return synth.EmbeddedCorpus() }

// Writer receives the conversations in order; *conv.Writer is one.
type Writer interface {
	Write(c *conv.Conversation) error
}

// Options are the inputs of Run.
type Options struct {
	// ConfigPath is a generate_conversations JSON config; "" means
	// DefaultConfig.
	ConfigPath string
	// ConfigData, if not nil, is the config's content, read from
	// ConfigPath by the caller (or from stdin: ConfigPath then only names
	// it in errors and resolves relative text_files).
	ConfigData []byte
	// Overrides replace the config's settings (command-line flags).
	Overrides Overrides
	// Tokenizer counts tokens; every user message has exactly its Tokens
	// in it.
	Tokenizer Tokenizer
	// TokenizerName is recorded in each conversation's metadata (use the
	// spec the user gave, not a machine-specific path).
	TokenizerName string
	// Workers is the number of goroutines making text; 0 means GOMAXPROCS.
	// The output does not depend on it.
	Workers int
}

// Limits on sampled sizes: a sample above them is an error that asks for a
// max (an unbounded zipf can draw astronomically large values).
const (
	maxTurns        = 1 << 16
	maxMessageTurns = 1 << 24
)

// Run generates the conversations of the configured workload into w and,
// if asked, prints the statistics table to stderr. It returns the number of
// conversations written.
func Run(ctx context.Context, o Options, w Writer, stderr io.Writer) (int, error) {
	cfg := DefaultConfig()
	switch {
	case o.ConfigData != nil:
		var err error
		if cfg, err = ParseConfig(o.ConfigData, o.ConfigPath); err != nil {
			return 0, err
		}
	case o.ConfigPath != "":
		var err error
		if cfg, err = LoadConfig(o.ConfigPath); err != nil {
			return 0, err
		}
	}
	if err := cfg.Apply(o.Overrides); err != nil {
		return 0, err
	}
	g, err := New(cfg, o.Tokenizer, o.TokenizerName)
	if err != nil {
		return 0, err
	}
	var st *Stats
	if cfg.PrintStats {
		st = &Stats{}
	}
	n, err := g.Generate(ctx, w, o.Workers, st)
	if err != nil {
		return n, err
	}
	if st != nil {
		st.Wraps = g.walk.Wraps()
		st.Redrawn = g.apart.redrawn
		if err := st.Print(stderr); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Generator makes the conversations of one workload. Use it once.
type Generator struct {
	cfg     *Config
	tok     Tokenizer
	tokName string
	walk    synth.Walker
	apart   *distinct
	groups  int // number of shared prefixes (1 in vLLM mode)
	common  []*sharedPrefix
	commonN []int // sampled size of each group's prefix
	rTurns  *rand.Rand
	rPrefix *rand.Rand
	rIn     *rand.Rand
	rOut    *rand.Rand
	rThink  *rand.Rand
}

// sharedPrefix is a common prefix text and its exact token count.
type sharedPrefix struct {
	text   string
	tokens int
}

// RNG streams: one per purpose, so that adding think times does not change
// token counts and so on.
const (
	streamCommon = 0x6d7467656e000001 + iota
	streamTurns
	streamPrefix
	streamIn
	streamOut
	streamThink
	streamRedraw
)

// New prepares a generator: it reads the corpus and samples the common
// prefix sizes (once, or once per prefix group).
func New(cfg *Config, tok Tokenizer, tokName string) (*Generator, error) {
	if tok == nil {
		return nil, errors.New("gen: no tokenizer")
	}
	if cfg.NumConversations < 1 {
		return nil, errors.New("num_conversations: must be at least 1")
	}
	text, err := synth.LoadCorpus(cfg.TextFiles)
	if err != nil {
		return nil, err
	}
	src := synth.NewStream(tok, text)
	src.Ensure(1)
	if len(src.IDs()) == 0 {
		return nil, errors.New("text files: the corpus encodes to no tokens")
	}
	seed := cfg.Seed
	rng := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
	g := &Generator{
		cfg: cfg, tok: tok, tokName: tokName,
		walk:    synth.Walker{Src: src},
		apart:   newDistinct(tok, text, seed),
		groups:  max(cfg.PrefixGroups, 1),
		rTurns:  rng(streamTurns),
		rPrefix: rng(streamPrefix),
		rIn:     rng(streamIn),
		rOut:    rng(streamOut),
		rThink:  rng(streamThink),
	}
	rCommon := rng(streamCommon)
	g.common = make([]*sharedPrefix, g.groups)
	g.commonN = make([]int, g.groups)
	for i := range g.commonN {
		n, err := sampleCount(&cfg.CommonPrefixTokens, rCommon, "common_prefix_num_tokens", maxMessageTurns)
		if err != nil {
			return nil, err
		}
		g.commonN[i] = n
	}
	return g, nil
}

func sampleCount(d *dist.Dist, r *rand.Rand, what string, limit int64) (int, error) {
	x := d.Sample(r)
	n := dist.CountOf(x)
	if n > limit {
		return 0, fmt.Errorf("%s: sampled %s, more than the limit %d; give the distribution a max", what, strconv.FormatFloat(x, 'g', 6, 64), limit)
	}
	return int(n), nil
}

// slack is the number of spare corpus tokens reserved with a window of n
// tokens, for the exact-count adjustment.
func slack(n int) int { return n/8 + 16 }

// job is one planned conversation: its sizes and corpus windows, decided
// in order by the planner; the text is made by a worker.
type job struct {
	index   int
	group   int
	common  *sharedPrefix
	prefixN int
	tag     []int
	prefix  []int
	userN   []int
	outN    []int
	think   []float64
	userWin [][]int
	outWin  [][]int

	head  string // text the first user message starts with on purpose
	headN int

	conv *conv.Conversation
	err  error
	done chan struct{}
}

// plan draws conversation i's sizes and reserves its corpus windows.
func (g *Generator) plan(i int) (*job, error) {
	cfg := g.cfg
	j := &job{index: i, group: i % g.groups, done: make(chan struct{})}
	if g.common[j.group] == nil {
		n := g.commonN[j.group]
		sp := &sharedPrefix{}
		if n > 0 {
			text, c, err := synth.ExactText(g.tok, "", 0, g.walk.Take(n+slack(n)), n)
			if err != nil {
				return nil, fmt.Errorf("common prefix: %w", err)
			}
			sp.text, sp.tokens = text, c
		}
		g.common[j.group] = sp
	}
	j.common = g.common[j.group]
	turns, err := sampleCount(&cfg.NumTurns, g.rTurns, "num_turns", maxTurns)
	if err != nil {
		return nil, err
	}
	turns = max(turns, 2)
	turns += turns % 2
	if j.prefixN, err = sampleCount(&cfg.PrefixTokens, g.rPrefix, "prefix_num_tokens", maxMessageTurns); err != nil {
		return nil, err
	}
	if j.prefixN > 0 {
		j.tag = g.tok.Encode("[" + convID(i) + "]")
		j.prefix = g.walk.Take(j.prefixN + slack(j.prefixN))
	}
	pairs := turns / 2
	j.userN, j.outN = make([]int, pairs), make([]int, pairs)
	j.userWin, j.outWin = make([][]int, pairs), make([][]int, pairs)
	j.think = make([]float64, pairs)
	for t := range pairs {
		n, err := sampleCount(&cfg.InputTokens, g.rIn, "num_tokens", maxMessageTurns)
		if err != nil {
			return nil, err
		}
		j.userN[t] = max(n, 1)
		fill := j.userN[t]
		if t == 0 {
			fill = max(fill-j.prefixN, 0)
			if cfg.PrefixGroups == 0 {
				fill = max(fill-j.common.tokens, 0)
			}
		}
		j.userWin[t] = g.walk.Take(fill + slack(fill))
		if j.outN[t], err = sampleCount(&cfg.OutputTokens, g.rOut, "prompt_output.num_tokens", maxMessageTurns); err != nil {
			return nil, err
		}
		j.outN[t] = max(j.outN[t], 1)
		j.outWin[t] = g.walk.Take(j.outN[t])
		if t > 0 && cfg.ThinkTime != nil {
			s := cfg.ThinkTime.Sample(g.rThink)
			j.think[t] = math.Round(float64(s*1e6)) / 1e3 // ms, to the microsecond
		}
	}
	return j, nil
}

// convID is the id of conversation i, as vLLM names them.
func convID(i int) string { return "CONV_ID_" + strconv.Itoa(i) }

// build makes the text of a planned conversation.
func (g *Generator) build(j *job) error {
	tok := g.tok
	c := &conv.Conversation{
		ID:       convID(j.index),
		Messages: make([]conv.Message, 0, 2*len(j.userN)+1),
		Meta: map[string]any{
			"generator":            "mtgen",
			"seed":                 g.cfg.Seed,
			"tokenizer":            g.tokName,
			"common_prefix_tokens": j.common.tokens,
			"prefix_tokens":        j.prefixN,
		},
	}
	head, headN := "", 0
	if g.cfg.PrefixGroups > 0 {
		c.Meta["prefix_group"] = j.group
		if j.common.tokens > 0 {
			c.Messages = append(c.Messages, conv.Message{Role: conv.RoleSystem, Content: j.common.text, Tokens: j.common.tokens})
		}
	} else {
		head, headN = j.common.text, j.common.tokens
	}
	if j.prefixN > 0 {
		win := make([]int, 0, len(j.tag)+len(j.prefix))
		win = append(append(win, j.tag...), j.prefix...)
		u, n, err := synth.ExactText(tok, "", 0, win, j.prefixN)
		if err != nil {
			return fmt.Errorf("%s: prefix: %w", c.ID, err)
		}
		head, headN = head+u, headN+n
	}
	j.head, j.headN = head, headN
	for t := range j.userN {
		var (
			text string
			n    int
			err  error
		)
		if t == 0 {
			text, n, err = synth.ExactText(tok, head, headN, j.userWin[0], max(j.userN[0], headN))
		} else {
			text, n, err = synth.ExactText(tok, "", 0, j.userWin[t], j.userN[t])
		}
		if err != nil {
			return fmt.Errorf("%s: user message %d: %w", c.ID, t, err)
		}
		c.Messages = append(c.Messages,
			conv.Message{Role: conv.RoleUser, Content: text, Tokens: n, ThinkTimeMs: j.think[t]},
			conv.Message{Role: conv.RoleAssistant, Content: synth.DecodeValid(tok, j.outWin[t]), OutputTokens: j.outN[t]})
	}
	j.conv = c
	return nil
}

// Generate writes the conversations to w in order, making their text with
// workers goroutines (0 means GOMAXPROCS), and adds them to st if it is not
// nil. It returns the number of conversations written.
func (g *Generator) Generate(parent context.Context, w Writer, workers int, st *Stats) (int, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	order := make(chan *job, 4*workers)
	work := make(chan *job, 4*workers)
	var planErr error
	go func() {
		defer close(order)
		defer close(work)
		for i := 0; i < g.cfg.NumConversations; i++ {
			j, err := g.plan(i)
			if err != nil {
				planErr = err
				return
			}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case work <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.err = g.build(j)
				close(j.done)
			}
		}()
	}
	written, err := 0, error(nil)
loop:
	for j := range order {
		select {
		case <-j.done:
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
		if j.err == nil {
			j.err = g.apart.check(j)
		}
		if j.err != nil {
			err = j.err
			break
		}
		if err = w.Write(j.conv); err != nil {
			break
		}
		written++
		if st != nil {
			st.Add(j.conv)
		}
		j.conv = nil
	}
	cancel()
	for range order {
	}
	wg.Wait()
	if err == nil {
		err = planErr
	}
	if err == nil && written < g.cfg.NumConversations {
		err = parent.Err()
	}
	return written, err
}
