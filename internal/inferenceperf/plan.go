package inferenceperf

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/dist"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/synth"
)

// Plan is the workload derived from a Config: the sessions in the
// schedule's order, and the schedule that says when each request goes.
//
// With multi-turn chat (enable_multi_turn_chat), each stage has
// Groups × UsersPerGroup user sessions, as in inference-perf: user u of
// group g has the group's system prompt, its own question and its own
// output length, and sends that question in every round with the whole
// history before it (the system prompt, then its earlier questions and
// the server's answers). Inference-perf loops over the users forever,
// request i of a stage being round ⌊i/users⌋ of user i mod users; the
// stage's ⌊rate × duration⌋ requests decide how many rounds each user
// sends. Without multi-turn chat every request is a one-turn session: the
// system prompt and the question of user i mod users.
type Plan struct {
	Config   *Config
	Schedule *schedule.Requests
	Sessions []conv.Conversation
	// Users is the number of users a stage has (Groups × UsersPerGroup).
	Users int
	// MaxInFlight caps the sessions in progress (num_workers ×
	// worker_max_concurrency) when that is below what a stage runs at
	// once; 0: no cap.
	MaxInFlight int
	// ArrivalSeed and TextSeed are the seeds used.
	ArrivalSeed, TextSeed uint64
	// Tokenizer names the tokenizer the lengths are exact in.
	Tokenizer string
	// Stages are the stages planned: the file's, the sweep's probe, or
	// the stages a sweep generated (Replan).
	Stages []Stage
	// Probe is set when the plan is a sweep's probe.
	Probe bool

	tok  synth.Tokenizer
	seed uint64
}

// user is one user of the shared-prefix data: its group and lengths.
type user struct {
	group           int
	question        string
	questionN, outN int
	groupN          int
}

// Streams of the text seed.
const (
	streamLengths = 0x6c656e
	streamOrder   = 0x6f7264
)

// Plan derives the workload. tok makes the text (token-exact lengths in
// tok, named tokName); seed seeds what the file does not (load.base_seed
// for the arrival times, data.shared_prefix.seed for the lengths and
// text; inference-perf draws those from the clock).
//
// With load.sweep, the plan is the sweep's probe; Replan plans the
// stages generated from its saturation rate.
func (c *Config) Plan(tok synth.Tokenizer, tokName string, seed uint64) (*Plan, error) {
	if c.Load.Sweep != nil {
		p, err := c.planStages(tok, tokName, seed, []Stage{c.Load.Sweep.probeStage()})
		if p != nil {
			p.Probe = true
		}
		return p, err
	}
	return c.planStages(tok, tokName, seed, c.Load.Stages)
}

// Replan plans stages (a sweep's, generated from its probe) with the
// plan's tokenizer and seeds.
func (p *Plan) Replan(stages []Stage) (*Plan, error) {
	return p.Config.planStages(p.tok, p.Tokenizer, p.seed, stages)
}

func (c *Config) planStages(tok synth.Tokenizer, tokName string, seed uint64, cstages []Stage) (*Plan, error) {
	p := &Plan{Config: c, ArrivalSeed: seed, TextSeed: seed, Tokenizer: tokName, Stages: cstages, tok: tok, seed: seed}
	if c.Load.BaseSeed != nil {
		p.ArrivalSeed = uint64(*c.Load.BaseSeed)
	}
	if c.Data.Seed != nil {
		p.TextSeed = uint64(*c.Data.Seed)
	}
	d := c.Data
	users := d.Groups * d.UsersPerGroup
	if users > 1<<20 {
		return nil, fmt.Errorf("%s: data.shared_prefix: %d groups × %d users: at most %d users", c.File, d.Groups, d.UsersPerGroup, 1<<20)
	}
	p.Users = users
	stages := make([]schedule.RequestStage, len(cstages))
	for i, s := range cstages {
		stages[i] = schedule.RequestStage{Rate: s.Rate, Duration: s.Duration}
	}
	perStage := 0
	if d.MultiTurn {
		perStage = users
	}
	sched, err := schedule.NewRequests(stages, c.Load.Poisson, perStage, c.Load.Interval, p.ArrivalSeed, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: load.%w", c.File, err)
	}
	p.Schedule = sched
	us, groups, err := c.users(tok, p.TextSeed)
	if err != nil {
		return nil, err
	}
	total := 0
	for k := range stages {
		n := sched.StageSessions(k)
		if d.MultiTurn {
			// All of a stage's sessions are in progress at once.
			total = max(total, n)
		}
		for i := range n {
			u := us[i%users]
			id := fmt.Sprintf("stage%d-request_%d", k+1, i)
			rounds := 1
			if d.MultiTurn {
				id, rounds = fmt.Sprintf("stage%d-user_session_%d", k+1, i), sched.Rounds(k, i)
			}
			msgs := make([]conv.Message, 0, 1+2*rounds)
			if u.groupN > 0 {
				msgs = append(msgs, conv.Message{Role: conv.RoleSystem, Content: groups[u.group], Tokens: u.groupN})
			}
			for range rounds {
				msgs = append(msgs,
					conv.Message{Role: conv.RoleUser, Content: u.question, Tokens: u.questionN},
					conv.Message{Role: conv.RoleAssistant, OutputTokens: u.outN})
			}
			p.Sessions = append(p.Sessions, conv.Conversation{ID: id, Messages: msgs, Meta: map[string]any{
				"generator": "inference-perf shared_prefix", "config": c.File, "stage": k + 1,
				"user": i % users, "prefix_group": u.group, "tokenizer": tokName,
			}})
		}
	}
	if workers := c.Load.NumWorkers * c.Load.WorkerMaxConcurrency; d.MultiTurn && workers < total {
		p.MaxInFlight = workers
	}
	return p, nil
}

// users draws the users' lengths and makes the groups' system prompts
// and the users' questions, in inference-perf's order: a system prompt
// length per group, then per group its questions' and outputs' lengths;
// the users are then shuffled (inference-perf shuffles its prompts so
// that consecutive requests do not all come from one group).
func (c *Config) users(tok synth.Tokenizer, seed uint64) ([]user, []string, error) {
	d := c.Data
	rng := rand.New(rand.NewPCG(seed, streamLengths))
	sysN := make([]int, d.Groups)
	for g := range sysN {
		n, err := d.SystemPromptLen.sample(rng)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: data.shared_prefix.system_prompt_len: %w", c.File, err)
		}
		sysN[g] = n
	}
	src := synth.NewStream(tok, synth.EmbeddedCorpus())
	src.Ensure(1)
	if len(src.IDs()) == 0 {
		return nil, nil, fmt.Errorf("the corpus encodes to no tokens")
	}
	walk := synth.Walker{Src: src}
	walk.Take(int(seed % 4096)) // the seed picks where the text starts
	text := func(n int) (string, int, error) {
		if n == 0 {
			return "", 0, nil
		}
		return synth.ExactText(tok, "", 0, walk.Take(n+n/8+16), n)
	}
	groups := make([]string, d.Groups)
	var us []user
	for g := range d.Groups {
		var err error
		if groups[g], sysN[g], err = text(sysN[g]); err != nil {
			return nil, nil, fmt.Errorf("%s: system prompt of group %d: %w", c.File, g, err)
		}
		qn, on := make([]int, d.UsersPerGroup), make([]int, d.UsersPerGroup)
		for i := range qn {
			if qn[i], err = d.QuestionLen.sample(rng); err != nil {
				return nil, nil, fmt.Errorf("%s: data.shared_prefix.question_len: %w", c.File, err)
			}
		}
		for i := range on {
			if on[i], err = d.OutLen.sample(rng); err != nil {
				return nil, nil, fmt.Errorf("%s: data.shared_prefix.output_len: %w", c.File, err)
			}
		}
		for i := range qn {
			q, n, err := text(qn[i])
			if err != nil {
				return nil, nil, fmt.Errorf("%s: question %d of group %d: %w", c.File, i, g, err)
			}
			us = append(us, user{group: g, question: q, questionN: n, outN: max(on[i], 1), groupN: sysN[g]})
		}
	}
	order := rand.New(rand.NewPCG(seed, streamOrder))
	order.Shuffle(len(us), func(i, j int) { us[i], us[j] = us[j], us[i] })
	return us, groups, nil
}

// sample draws one length.
func (l Length) sample(rng *rand.Rand) (int, error) {
	if l.Dist == nil {
		return l.Fixed, nil
	}
	return l.Dist.Sample(rng)
}

// Sample draws one value as inference-perf does: from the distribution's
// type, then clipped to [Min, Max] and rounded.
func (d *Distribution) Sample(rng *rand.Rand) (int, error) {
	var x float64
	switch d.Type {
	case "fixed":
		return int(d.Mean), nil
	case "normal", "":
		x = d.Mean + d.StdDev*rng.NormFloat64()
	case "skew_normal":
		// Azzalini's two-normal construction.
		delta := d.Skew / math.Sqrt(1+d.Skew*d.Skew)
		u0, v := rng.NormFloat64(), rng.NormFloat64()
		u1 := delta*u0 + math.Sqrt(1-delta*delta)*v
		if u0 < 0 {
			u1 = -u1
		}
		x = d.Mean + d.StdDev*u1
	case "lognormal":
		if d.StdDev <= 0 {
			x = d.Mean
			break
		}
		s2 := math.Log(1 + (d.StdDev/d.Mean)*(d.StdDev/d.Mean))
		x = math.Exp(math.Log(d.Mean) - s2/2 + math.Sqrt(s2)*rng.NormFloat64())
	case "uniform":
		x = float64(d.Min) + rng.Float64()*float64(d.Max+1-d.Min)
	case "poisson":
		lam := d.Mean
		if lam <= 0 {
			lam = 1
		}
		p, err := dist.Build(dist.Poisson, []dist.Param{{Key: "alpha", Val: lam}})
		if err != nil {
			return 0, err
		}
		x = p.Sample(rng)
	default:
		return 0, fmt.Errorf("distribution type %q", d.Type)
	}
	x = math.Round(min(max(x, float64(d.Min)), float64(d.Max)))
	return int(x), nil
}

// Describe writes the plan for mtrun --dry-run: the server, the data,
// every stage and the notes.
func (p *Plan) Describe(w io.Writer) error {
	c := p.Config
	b := &strings.Builder{}
	fmt.Fprintf(b, "inference-perf config %s\n", c.File)
	if c.HasServer {
		model := c.Server.ModelName
		if model == "" {
			model = "(the first id of /v1/models)"
		}
		fmt.Fprintf(b, "server: %s (%s), model %s, ignore_eos %t\n", c.Server.BaseURL, c.Server.Type, model, c.Server.IgnoreEOS)
	}
	api := "completion (/v1/completions)"
	if c.API.Chat {
		api = "chat (/v1/chat/completions)"
	}
	fmt.Fprintf(b, "api: %s, streaming %t\n", api, c.API.Streaming)
	d := c.Data
	fmt.Fprintf(b, "data: shared_prefix, %d groups × %d users = %d users; system prompt %s, question %s, output %s tokens (%s); multi-turn chat %t\n",
		d.Groups, d.UsersPerGroup, p.Users, d.SystemPromptLen, d.QuestionLen, d.OutLen, p.Tokenizer, d.MultiTurn)
	kind := "constant"
	if c.Load.Poisson {
		kind = "poisson"
	}
	fmt.Fprintf(b, "load: %s, %d stage(s) %s apart; seeds: arrivals %d, text %d\n", kind, len(p.Stages), c.Load.Interval, p.ArrivalSeed, p.TextSeed)
	if sw := c.Load.Sweep; sw != nil {
		spacing := "linear"
		if sw.Geometric {
			spacing = "geometric"
		}
		fmt.Fprintf(b, "sweep: a probe of %d requests in %s, measured for %s; then %d %s stages of %s up to the %gth percentile of its drain rates\n",
			sw.NumRequests, ProbeDuration, sw.Timeout, sw.NumStages, spacing, sw.StageDuration, sw.Percentile)
	}
	for k, s := range p.Stages {
		times := p.Schedule.Times(k)
		span := time.Duration(0)
		if len(times) > 0 {
			span = times[len(times)-1] - p.Schedule.Start(k)
		}
		name := fmt.Sprintf("stage %d", k+1)
		if p.Probe {
			name = "probe"
		}
		fmt.Fprintf(b, "  %s: rate %g/s for %s from %s: %d requests over %s, %d sessions\n",
			name, s.Rate, s.Duration, p.Schedule.Start(k).Round(time.Millisecond), len(times), span.Round(time.Millisecond), p.Schedule.StageSessions(k))
	}
	if p.MaxInFlight > 0 {
		fmt.Fprintf(b, "at most %d sessions in progress (num_workers × worker_max_concurrency)\n", p.MaxInFlight)
	}
	var prompts, rounds int
	for _, s := range p.Sessions {
		for _, m := range s.Messages {
			if m.Role == conv.RoleUser {
				rounds++
			}
		}
		prompts++
	}
	fmt.Fprintf(b, "sessions: %d, requests: %d\n", prompts, rounds)
	for _, n := range c.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String renders a length as the config gives it.
func (l Length) String() string {
	if l.Dist == nil {
		return fmt.Sprint(l.Fixed)
	}
	d := l.Dist
	return fmt.Sprintf("%s(mean %g, std_dev %g, min %d, max %d)", d.Type, d.Mean, d.StdDev, d.Min, d.Max)
}
