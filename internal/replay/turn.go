package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
)

// turnInfo is what the records of one attempt share.
type turnInfo struct {
	attempt      int
	phase        string
	scheduled    time.Time
	clientWait   time.Duration // see clientWait
	thinkPlanned time.Duration
	thinkActual  time.Duration
	clientPrompt int64
	inputMsgs    int
	retried      bool
	backend      string // the BackendHeader of the response
	stage        int    // stage of a staged schedule (0: none)
	end          string // record.ConversationEnd of this attempt
}

// request is a turn's request, built before the turn is due (build), so
// that the work of building it (client token counts, the context guard,
// encoding the body) is not part of its lateness.
type request struct {
	t            turnSpec
	body         []byte
	header       http.Header // the session's headers
	clientPrompt int
	inputMsgs    int
}

// build makes the request of the session's current turn (prepared and
// planned). It changes nothing the schedule reads; false means it failed
// and the run is stopping (r.fail).
func (r *runner) build(s *session) (*request, bool) {
	t := s.cur
	o := &r.o
	input := t.input()
	userTokens := 0
	if o.Tokenizer != nil {
		t.tokens = make([]int, len(input))
		for i := range input {
			t.tokens[i] = s.countSrc(t.at+i, o)
			userTokens += t.tokens[i]
		}
	}
	clientPrompt := s.guard(t.user, userTokens, t.maxTokens, r.maxLen)
	msgs := make([]conv.Message, len(s.hist), len(s.hist)+len(input))
	copy(msgs, s.hist)
	for _, m := range input {
		msgs = append(msgs, wire(m))
	}
	spec := openai.Request{Params: o.params(), Model: r.model, Messages: msgs, Tools: s.src.Tools, MaxTokens: t.maxTokens}
	if o.API != openai.APICompletions {
		enc, err := s.encoded()
		if err != nil {
			r.fail(fmt.Errorf("request body: %w", err))
			return nil, false
		}
		spec.Encoded = enc
	}
	spec.MinTokens = o.minTokens(t.maxTokens)
	if o.SendConversationID {
		spec.ConversationID = s.id
	}
	body, err := openai.Body(&spec)
	if err != nil {
		r.fail(err)
		return nil, false
	}
	return &request{t: t, body: body, header: o.sessionHeaders(s), clientPrompt: clientPrompt, inputMsgs: len(msgs)}, true
}

// runTurn sends the session's current turn, whose request is req (built
// for it, and due now), retrying as the failure policy allows, records
// every attempt and updates the history.
func (r *runner) runTurn(s *session, req *request) {
	n, ok := r.reserve()
	if !ok {
		return
	}
	t, body, clientPrompt := req.t, req.body, req.clientPrompt
	o := &r.o
	info := turnInfo{
		phase:        o.Phase,
		scheduled:    s.ready,
		thinkPlanned: s.think,
		inputMsgs:    req.inputMsgs,
	}
	if o.Tokenizer != nil {
		info.clientPrompt = int64(clientPrompt)
	}
	if n < int64(o.WarmupTurns) {
		info.phase = record.PhaseWarmup
	}
	if st, ok := r.sched.(schedule.Stager); ok {
		var warm bool
		info.stage, warm = st.StageAt(s.ready.Sub(r.anchor))
		if warm {
			info.phase = record.PhaseWarmup
		}
	}
	if o.PrintContent {
		r.printContent(s, ">>>", t.user.Content)
	}
	var a *attempt
	last := s.lastTurn(t, o)
	r.watchHung()
	header := req.header
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			header = o.sessionHeaders(s) // as the last response left the route
		}
		a = r.c.do(r.abort, body, header, o.timeoutFor(t.maxTokens), t.maxTokens)
		o.capture(s, a.Header)
		if o.BackendHeader != "" {
			info.backend = a.Header.Get(o.BackendHeader)
		}
		if attempt == 0 {
			info.clientWait = clientWait(s, a.Start)
			if !s.lastEnd.IsZero() {
				info.thinkActual = a.Start.Sub(s.lastEnd)
			}
		}
		info.attempt = attempt
		info.retried = false
		unreachable := r.stopIfUnreachable(a)
		if a.Err != nil && retryable(a.Class) && attempt < o.MaxRetries && !unreachable {
			info.retried = r.backoff(attempt, a.RetryAfter)
		}
		if !info.retried {
			info.end = conversationEnd(last, s.failed, a, o)
		}
		r.emit(r.records(s, t, a, &info))
		if !info.retried {
			break
		}
	}
	s.lastEnd = a.Resp.End
	if a.Err != nil {
		s.failed = true
		s.consume(t, nil, uncounted, o)
		if o.OnFailure == AbandonConversation || a.Class == record.ErrCanceled {
			s.ended = true
			if a.Class != record.ErrCanceled {
				s.status = "abandoned"
			}
		}
		r.mu.Lock()
		r.sum.Failed++
		r.mu.Unlock()
		return
	}
	if u := a.Resp.Usage; u != nil && u.PromptTokens != nil && o.Tokenizer != nil && clientPrompt > 0 {
		s.promptScale = float64(*u.PromptTokens) / float64(clientPrompt)
	}
	live, liveTokens := "", uncounted
	if len(a.Resp.Choices) > 0 {
		c := a.Resp.Choices[0]
		live = string(c.Content)
		if o.KeepReasoning && len(c.Reasoning) > 0 {
			live = string(c.Reasoning) + live
		}
		if c.Counted && (o.KeepReasoning || len(c.Reasoning) == 0) {
			// The record's count is of the same text.
			liveTokens = c.Tokens
		}
	}
	answer := t.answer(live)
	if o.PrintContent {
		r.printContent(s, "<<<", answer.Content)
	}
	s.consume(t, &answer, liveTokens, o)
}

// clientWait is how long the session's current turn, due at s.ready and
// sent at start, waited for its client to be free: until the end of the
// client's previous request (s.free in closed loop, where the lane
// serves other conversations; s.lastEnd when the schedule made the turn
// due before its own previous answer ended) or until its --max-in-flight
// slot (s.free). It is the load's shape (a closed loop, or a slower
// server), not the generator sending late: the record's lateness is what
// remains of start − scheduled. think_actual = think_planned +
// client_wait + lateness for a turn planned after its previous answer.
func clientWait(s *session, start time.Time) time.Duration {
	free := s.lastEnd
	if s.free.After(free) {
		free = s.free
	}
	if free.IsZero() || !free.After(s.ready) {
		return 0
	}
	return min(free.Sub(s.ready), start.Sub(s.ready))
}

// backoff sleeps before a retry: exponential with jitter, or the server's
// Retry-After. It returns false when interrupted (no retry then).
func (r *runner) backoff(attempt int, after time.Duration) bool {
	d := r.o.RetryBase << min(attempt, 16)
	if d > r.o.RetryMax {
		d = r.o.RetryMax
	}
	r.rngMu.Lock()
	d = d/2 + time.Duration(r.rng.Int64N(int64(d/2)+1))
	r.rngMu.Unlock()
	if after > d {
		d = min(after, time.Minute)
	}
	return sleepUntil(r.stop, time.Now().Add(d))
}

// records turns one attempt into one record per choice.
func (r *runner) records(s *session, t turnSpec, a *attempt, info *turnInfo) []*record.Record {
	choices := a.Resp.Choices
	if len(choices) == 0 {
		choices = []*openai.Choice{{}}
	}
	out := make([]*record.Record, 0, len(choices))
	for i, c := range choices {
		rec := &record.Record{
			RunID:              r.o.RunID,
			Shard:              r.o.Shard,
			Segment:            r.o.Segment,
			Segments:           r.o.Segments,
			Host:               r.o.Host,
			ConversationID:     s.id,
			Turn:               s.turn,
			Attempt:            info.attempt,
			Choice:             i,
			Client:             s.client,
			Phase:              info.phase,
			Model:              r.model,
			Scheduled:          r.wall(info.scheduled),
			Start:              r.wall(a.Start),
			End:                r.wall(a.Resp.End),
			LatencyNs:          int64(a.Resp.End.Sub(a.Start)),
			IntendedLatencyNs:  int64(a.Resp.End.Sub(info.scheduled)),
			LatenessNs:         int64(a.Start.Sub(info.scheduled) - info.clientWait),
			ClientWaitNs:       record.Ptr(int64(info.clientWait)),
			ThinkPlannedNs:     int64(info.thinkPlanned),
			ThinkActualNs:      int64(info.thinkActual),
			ClientPromptTokens: info.clientPrompt,
			InputMessages:      info.inputMsgs,
			DroppedMessages:    s.dropped,
			MaxTokens:          t.maxTokens,
			Chunks:             c.Chunks,
			ReasoningChunks:    c.ReasonChunks,
			FinishReason:       c.FinishReason,
			Status:             a.Status,
			ErrorClass:         a.Class,
			Retried:            info.retried,
			ConversationEnd:    info.end,
			Backend:            info.backend,
			ITLNs:              c.ITL,
			Stage:              info.stage,
		}
		rec.MinTokens = r.o.minTokens(t.maxTokens)
		if a.Err != nil {
			rec.Error = a.Err.Error()
		}
		if !c.FirstToken.IsZero() {
			ft := r.wall(c.FirstToken)
			rec.FirstToken = &ft
			rec.TTFTNs = record.Ptr(int64(c.FirstToken.Sub(a.Start)))
			if !c.FirstContent.IsZero() && !c.FirstContent.Equal(c.FirstToken) {
				rec.TTFTContentNs = record.Ptr(int64(c.FirstContent.Sub(a.Start)))
			}
		}
		if u := a.Resp.Usage; u != nil {
			rec.PromptTokens = u.PromptTokens
			if u.PromptTokensDetails != nil {
				rec.CachedTokens = u.PromptTokensDetails.CachedTokens
			}
			// Usage covers the whole request: with n > 1 it is reported
			// on choice 0 only, so sums over records stay right.
			if i == 0 {
				rec.CompletionTokens = u.CompletionTokens
				if u.CompletionTokensDetails != nil {
					rec.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
				}
			}
		}
		if r.o.Tokenizer != nil && (len(c.Content) > 0 || len(c.Reasoning) > 0) {
			if !c.Counted {
				c.Tokens, c.Counted = r.o.Tokenizer.Count(string(c.Reasoning)+string(c.Content)), true
			}
			rec.ClientCompletionTokens = int64(c.Tokens)
		}
		tokens := int64(c.Chunks)
		if len(choices) == 1 && rec.CompletionTokens != nil {
			tokens = *rec.CompletionTokens
		}
		if tokens > 1 && !c.FirstToken.IsZero() {
			rec.TPOTNs = record.Ptr(float64(c.LastToken.Sub(c.FirstToken)) / float64(tokens-1))
		}
		if extra := mergeExtras(a.Resp.Extra, c.Extra); extra != "" {
			rec.ServerExtra = extra
		}
		if r.o.Verify && a.Err == nil && t.reference != nil && len(t.reference.ToolCalls) == 0 {
			rec.VerifyMismatch = record.Ptr(strings.TrimSpace(string(c.Content)) != strings.TrimSpace(t.reference.Content))
		}
		out = append(out, rec)
	}
	return out
}

func mergeExtras(top, choice json.RawMessage) string {
	switch {
	case len(top) == 0:
		return string(choice)
	case len(choice) == 0:
		return string(top)
	}
	m := map[string]json.RawMessage{}
	json.Unmarshal(top, &m)
	json.Unmarshal(choice, &m)
	b, _ := json.Marshal(m)
	return string(b)
}

// wall converts a monotonic reading to wall-clock time from the run's
// single anchor, so record timestamps never jump with the system clock.
func (r *runner) wall(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return r.anchor.Add(t.Sub(r.anchor)).Round(0)
}

// emit numbers records and queues them for the writer; it waits only if
// the writer's queue is full.
func (r *runner) emit(recs []*record.Record) {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	r.mu.Lock()
	for _, rec := range recs {
		rec.Seq = r.seq
		r.seq++
		r.live.add(rec)
		if rec.Choice == 0 {
			r.sum.Attempts++
			if rec.Retried {
				r.sum.Retries++
			} else {
				r.sum.Requests++
			}
		}
		if v := rec.VerifyMismatch; v != nil {
			r.sum.Verified++
			if *v {
				r.sum.Mismatched++
				if r.sum.FirstMismatch == nil {
					r.sum.FirstMismatch = &TurnRef{rec.ConversationID, rec.Turn}
				}
			}
		}
	}
	r.mu.Unlock()
	r.w.send(item{recs: recs})
}

// fail keeps err if it is the first and stops the run.
func (r *runner) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
	r.cancelStop()
}

func (r *runner) printContent(s *session, dir, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.sink.Log, "[%s user turn %d] %s %s\n", s.id, s.turn, dir, text)
}

// conversationEnd is how the conversation ends with attempt a of its
// current turn (the final attempt), as mtrun's summary counts it: ""
// when it goes on; last says the turn is its last.
func conversationEnd(last, failedBefore bool, a *attempt, o *Options) string {
	switch {
	case a.Err != nil && a.Class == record.ErrCanceled:
		return "failed"
	case a.Err != nil && o.OnFailure == AbandonConversation:
		return "abandoned"
	case !last:
		return ""
	case failedBefore || a.Err != nil:
		return "failed"
	}
	return "finished"
}
