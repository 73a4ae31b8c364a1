package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/source"
)

// TestHistoryNone checks a conversation with history "none" against the
// simulator: each turn sends the system messages and its own user message
// only (no earlier turn, no live answer), so its prompt_tokens equal
// those of a one-turn conversation of that message; with the live
// history (the default) the same turns grow. The conversation written
// back still holds every message sent and received.
func TestHistoryNone(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{DefaultMaxTokens: 4})
	users := []string{"First question about apples.", "Second, about pears and plums.", "Third: cherries?"}
	build := func(history string, turns []string) conv.Conversation {
		c := conv.Conversation{ID: "c", History: history, Messages: []conv.Message{{Role: conv.RoleSystem, Content: "Be brief."}}}
		for _, u := range turns {
			c.Messages = append(c.Messages, conv.Message{Role: conv.RoleUser, Content: u}, conv.Message{Role: conv.RoleAssistant, Content: "ok", OutputTokens: 4})
		}
		return c
	}
	o := Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 1}}
	prompts := func(c conv.Conversation) []int64 {
		res := replayT(t, o, []conv.Conversation{c})
		var out []int64
		for _, r := range res.byConv()["c"] {
			if r.PromptTokens == nil {
				t.Fatalf("turn %d: no prompt_tokens", r.Turn)
			}
			out = append(out, *r.PromptTokens)
		}
		if len(res.convs) != 1 || len(res.convs[0].Messages) != 1+2*len(users[:len(out)]) {
			t.Fatalf("conversation written back: %+v", res.convs)
		}
		return out
	}
	none := prompts(build(conv.HistoryNone, users))
	live := prompts(build(conv.HistoryLive, users))
	if len(none) != 3 || len(live) != 3 {
		t.Fatalf("turns: none %v, live %v", none, live)
	}
	for i, u := range users {
		alone := prompts(build(conv.HistoryLive, []string{u}))
		if none[i] != alone[0] {
			t.Errorf("turn %d with history none: %d prompt tokens, want %d (system + this message only)", i, none[i], alone[0])
		}
	}
	if !(live[1] > none[1] && live[2] > none[2]) {
		t.Errorf("live history %v is not longer than history none %v", live, none)
	}

	// What the server received, message by message.
	fs := newFakeServer(t, nil)
	replayT(t, Options{URL: fs.URL, Stream: true, Schedule: schedule.Closed{Clients: 1}}, []conv.Conversation{build(conv.HistoryNone, users)})
	reqs := fs.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if len(r.Msgs) != 2 || r.Msgs[0].Role != conv.RoleSystem || r.Msgs[1].Content != users[i] {
			t.Errorf("request %d sent %+v, want the system message and %q", i, r.Msgs, users[i])
		}
	}
}

// chatTemplateOverhead is what the simulator adds to a one-message
// prompt. It renders a chat request as Qwen2.5's template does
// (internal/sim/request.go): "<|im_start|>user\n" + content +
// "<|im_end|>\n", then the generation prompt "<|im_start|>assistant\n",
// each segment tokenized on its own in its tokenizer, o200k_base by
// default, where the markers are plain text, not special tokens:
// "<", "|", "im", "_start", "|", ">", "user", "\n" before the content
// (8), "<", "|", "im", "_end", "|", ">\n" after it (6), and the
// generation prompt (8): 22 tokens. Synthesized prompts start with a
// letter (no merge with the "\n" before) and end with a newline (no merge
// with the "<" after), so the content keeps exactly its count.
const (
	chatTemplateOverhead = 22
	chatTemplateHead     = 8 // the tokens before the content
)

// TestMooncakeOnSimulator is the acceptance test of trace replay. Real
// Mooncake requests (from the conversation trace excerpt, picked to share
// long prefixes: the first requests sharing at least two 512-token blocks
// with an earlier one, and those earlier ones) are read by the mooncake
// format, replayed one at a time against the simulator with a prefix
// cache large enough never to evict, and checked request by request
// (replayTraceOnSim): prompt_tokens == input_length + 22, the chat
// template's overhead, and cached_tokens == the prefix the hash ids
// imply (512-token blocks), exactly where the shared blocks are whole.
func TestMooncakeOnSimulator(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../source/testdata/traces/mooncake_conversation_head300.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		Timestamp    float64 `json:"timestamp"`
		InputLength  int     `json:"input_length"`
		OutputLength int     `json:"output_length"`
		HashIDs      []int64 `json:"hash_ids"`
	}
	var all []req
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r req
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	common := func(a, b []int64) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	// Pick the excerpt: lines 1-2, and the first 7 requests sharing at
	// least 2 blocks with an earlier request, with that request.
	pick := map[int]bool{0: true, 1: true}
	for j, pairs := 0, 0; j < len(all) && pairs < 7; j++ {
		for i := range j {
			if common(all[i].HashIDs, all[j].HashIDs) >= 2 {
				pick[i], pick[j] = true, true
				pairs++
				break
			}
		}
	}
	var excerpt []req
	var lines bytes.Buffer
	for i, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if pick[i] {
			excerpt = append(excerpt, all[i])
			lines.Write(l)
			lines.WriteByte('\n')
		}
	}
	f, _ := source.Lookup("mooncake")
	src, err := f.Open(&lines, "excerpt.jsonl", source.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sent []traceReq
	for _, r := range excerpt {
		sent = append(sent, traceReq{r.InputLength, r.HashIDs})
	}
	hits, exact := replayTraceOnSim(t, src, 512, func(r *record.Record) traceReq {
		// Session "line-N" is line N of the excerpt.
		j, err := strconv.Atoi(strings.TrimPrefix(r.ConversationID, "line-"))
		if err != nil || j < 1 || j > len(excerpt) {
			t.Fatalf("record of %q", r.ConversationID)
		}
		return sent[j-1]
	}, len(excerpt))
	if hits < 14 || exact < 7 {
		t.Errorf("only %d requests with a shared prefix (%d exact): the excerpt does not test the cache", hits, exact)
	}
}

// TestBailianOnSimulator is TestMooncakeOnSimulator for the sessions of
// the (constructed) Bailian trace: 16-token blocks, each turn a whole
// prompt whose hash ids hold the earlier turns, sent in order with
// history "none". A turn's cached prefix is the earlier turn's whole
// blocks (and the system prompt every session shares).
func TestBailianOnSimulator(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../source/testdata/traces/bailian_constructed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The turns of each session, by root chat id, in time order (the
	// file is in time order).
	root := map[int64]int64{}
	turns := map[string][]traceReq{}
	for _, b := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var l struct {
			ChatID       int64   `json:"chat_id"`
			ParentChatID int64   `json:"parent_chat_id"`
			InputLength  int     `json:"input_length"`
			HashIDs      []int64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		root[l.ChatID] = l.ChatID
		if l.ParentChatID != -1 {
			root[l.ChatID] = root[l.ParentChatID]
		}
		id := "chat-" + strconv.FormatInt(root[l.ChatID], 10)
		turns[id] = append(turns[id], traceReq{l.InputLength, l.HashIDs})
	}
	f, _ := source.Lookup("bailian")
	src, err := f.Open(bytes.NewReader(data), "bailian.jsonl", source.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(bytes.TrimSpace(data), []byte("\n")) + 1
	hits, _ := replayTraceOnSim(t, src, 16, func(r *record.Record) traceReq {
		ts := turns[r.ConversationID]
		if r.Turn < 0 || r.Turn >= len(ts) {
			t.Fatalf("record of %s turn %d", r.ConversationID, r.Turn)
		}
		return ts[r.Turn]
	}, n)
	if hits < n-1 {
		t.Errorf("%d of %d requests with a shared prefix", hits, n)
	}
}

// traceReq is one request of a trace: its input length and hash ids.
type traceReq struct {
	in  int
	ids []int64
}

// replayTraceOnSim replays src one request at a time against the
// simulator (cache large enough never to evict; answers of 4 tokens: the
// test is about prompts; one client, so each prefill is in the cache
// before the next request) and checks each record, in the order sent,
// against its trace request (of), whose hash ids have blocks of
// blockSize tokens:
//
//   - prompt_tokens == input_length + chatTemplateOverhead, exactly;
//   - cached_tokens == the prefix the hash ids imply: the longest run of
//     leading hash ids shared with any earlier request, in tokens, plus
//     the template tokens before the content, rounded down to the
//     simulator's 16-token cache blocks and capped below the prompt's
//     last token (vLLM always computes the last token). It is exact when
//     the shared blocks are whole in both requests; when a shared block
//     is the cut last block of one of them, the cut text's tokens may end
//     differently, and the match may be one cache block shorter.
//
// It returns how many requests had a cached prefix and how many of those
// were checked exactly.
func replayTraceOnSim(t *testing.T, src source.Source, blockSize int, of func(*record.Record) traceReq, n int) (hits, exact int) {
	t.Helper()
	srv := startSim(t, sim.Config{CacheTokens: 10_000_000})
	o := Options{URL: srv.URL, Model: sim.DefaultModel, Stream: true, IncludeUsage: true, Schedule: schedule.Closed{Clients: 1}, LimitMaxTokens: 4,
		RetryBase: 1, RetryMax: 1, RequestTimeout: 60e9}
	recs := &memRecords{}
	if _, err := Run(t.Context(), t.Context(), o, noTimestamps{src}, Sink{Records: recs}); err != nil {
		t.Fatal(err)
	}
	got := recs.all()
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	slices.SortFunc(got, func(a, b *record.Record) int { return int(a.Seq - b.Seq) })
	common := func(a, b []int64) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	const cacheBlock = sim.DefaultBlockSize
	var earlier []traceReq
	for _, r := range got {
		w := of(r)
		name := fmt.Sprintf("%s turn %d", r.ConversationID, r.Turn)
		if r.PromptTokens == nil || r.CachedTokens == nil {
			t.Fatalf("%s: no usage", name)
		}
		prompt := int64(w.in + chatTemplateOverhead)
		if *r.PromptTokens != prompt {
			t.Errorf("%s: prompt_tokens %d, want input_length %d + %d", name, *r.PromptTokens, w.in, chatTemplateOverhead)
		}
		shared, whole := 0, true
		for _, e := range earlier {
			tokens, wholeHere := 0, true
			for b := range common(e.ids, w.ids) {
				lw, le := min(blockSize, w.in-blockSize*b), min(blockSize, e.in-blockSize*b)
				tokens += min(lw, le)
				if lw < blockSize || le < blockSize {
					wholeHere = false
				}
			}
			if tokens > shared {
				shared, whole = tokens, wholeHere
			}
		}
		earlier = append(earlier, w)
		want := min(int64(chatTemplateHead+shared), prompt-1) / cacheBlock * cacheBlock
		if shared == 0 {
			want = 0
		}
		d := *r.CachedTokens - want
		if whole && d != 0 || !whole && (d > 0 || d < -cacheBlock) {
			t.Errorf("%s: cached_tokens %d, want %d (shared prefix %d tokens, whole blocks %v)", name, *r.CachedTokens, want, shared, whole)
		}
		if want > 0 {
			hits++
			if whole {
				exact++
			}
		}
	}
	t.Logf("%d requests, %d with cached prefixes (%d checked exactly)", len(got), hits, exact)
	return hits, exact
}

// noTimestamps replays a trace source closed-loop: the test is about
// prompts and the cache, not the trace clock.
type noTimestamps struct{ source.Source }

func (s noTimestamps) Next() (conv.Conversation, bool) {
	c, ok := s.Source.Next()
	for i := range c.Messages {
		c.Messages[i].TimestampMs = nil
	}
	return c, ok
}
