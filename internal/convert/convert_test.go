package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/jsonl"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// sg builds a ShareGPT JSONL line; turns alternate "from", "value".
func sg(id string, turns ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%q,"conversations":[`, id)
	for i := 0; i < len(turns); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"from":%q,"value":%q}`, turns[i], turns[i+1])
	}
	b.WriteString("]}\n")
	return b.String()
}

func TestFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    Options
		in      string
		want    []string
		dropped map[Reason]int
	}{
		{
			name: "defaults repair and keep a trailing user message",
			in:   sg("a", "gpt", "hi", "human", "q1", "human", "q2", "gpt", "r1", "gpt", "r2", "human", "q3"),
			want: []string{"a: u:q1\n\nq2 a:r1\n\nr2 u:q3"},
		},
		{
			name:    "alternation drop",
			opts:    Options{Alternation: AlternationDrop},
			in:      sg("a", "human", "q", "human", "q2") + sg("b", "gpt", "x", "human", "q") + sg("c", "system", "s", "human", "q", "gpt", "r"),
			want:    []string{"c: s:s u:q a:r"},
			dropped: map[Reason]int{ReasonAlternation: 2},
		},
		{
			name: "system not leading is removed by repair",
			in:   sg("a", "system", "s1", "system", "s2", "human", "q", "system", "late", "human", "q2"),
			want: []string{"a: s:s1\n\ns2 u:q\n\nq2"},
		},
		{
			name: "drop system",
			opts: Options{DropSystem: true},
			in:   sg("a", "system", "s", "human", "q", "gpt", "r"),
			want: []string{"a: u:q a:r"},
		},
		{
			name:    "empty messages",
			in:      sg("a", "human", " \n", "gpt", "") + sg("b", "human", "q", "gpt", "", "human", "q2"),
			want:    []string{"b: u:q\n\nq2"},
			dropped: map[Reason]int{ReasonEmpty: 1},
		},
		{
			name: "keep empty",
			opts: Options{KeepEmpty: true},
			in:   sg("b", "human", "q", "gpt", "", "human", "q2"),
			want: []string{"b: u:q a: u:q2"},
		},
		{
			name:    "min turns counts user and assistant messages",
			opts:    Options{MinTurns: 3},
			in:      sg("a", "system", "s", "human", "q", "gpt", "r") + sg("b", "human", "q", "gpt", "r", "human", "q2"),
			want:    []string{"b: u:q a:r u:q2"},
			dropped: map[Reason]int{ReasonTooFewTurns: 1},
		},
		{
			name: "max turns truncates",
			opts: Options{MaxTurns: 3},
			in:   sg("a", "system", "s", "human", "q", "gpt", "r", "human", "q2", "gpt", "r2"),
			want: []string{"a: s:s u:q a:r u:q2"},
		},
		{
			name:    "content length in characters, not bytes",
			opts:    Options{MinContentLen: 2, MaxContentLen: 3},
			in:      sg("a", "human", "你好吗", "gpt", "ok") + sg("b", "human", "x", "gpt", "ok") + sg("c", "human", "abcd", "gpt", "ok"),
			want:    []string{"a: u:你好吗 a:ok"},
			dropped: map[Reason]int{ReasonTooShort: 1, ReasonTooLong: 1},
		},
		{
			name:    "ascii only keeps ASCII conversations (vLLM kept the opposite)",
			opts:    Options{ASCIIOnly: true},
			in:      sg("a", "human", "hello", "gpt", "hi") + sg("b", "human", "héllo", "gpt", "hi"),
			want:    []string{"a: u:hello a:hi"},
			dropped: map[Reason]int{ReasonNonASCII: 1},
		},
		{
			name:    "dedupe",
			opts:    Options{Dedupe: true},
			in:      sg("a", "human", "1") + sg("b", "human", "2") + sg("a", "human", "3"),
			want:    []string{"a: u:1", "b: u:2"},
			dropped: map[Reason]int{ReasonDuplicateID: 1},
		},
		{
			name: "no dedupe",
			in:   sg("a", "human", "1") + sg("a", "human", "3"),
			want: []string{"a: u:1", "a: u:3"},
		},
		{
			// Part numbers are the index of the part's first message.
			name: "parts merge in numeric order",
			in: sg("x_y_10", "human", "p10") + sg("x_y_2", "human", "p2", "gpt", "r2", "human", "p4", "gpt", "r4", "human", "p6", "gpt", "r6", "human", "p8", "gpt", "r8") +
				sg("x_y_0", "human", "p0", "gpt", "r0") + sg("z", "human", "z"),
			want: []string{"x_y: u:p0 a:r0 u:p2 a:r2 u:p4 a:r4 u:p6 a:r6 u:p8 a:r8 u:p10", "z: u:z"},
		},
		{
			name:    "non-adjacent part dropped with --parts adjacent",
			opts:    Options{Dedupe: true},
			in:      sg("a_0", "human", "q0", "gpt", "r0") + sg("b", "human", "b") + sg("a_2", "human", "q1"),
			want:    []string{"a_0: u:q0 a:r0", "b: u:b"},
			dropped: map[Reason]int{ReasonPartNotAdjacent: 1},
		},
		{
			name: "parts all merges non-adjacent parts",
			opts: Options{Parts: PartsAll, Dedupe: true},
			in:   sg("a_2", "human", "q1") + sg("b", "human", "b") + sg("a_0", "human", "q0", "gpt", "r0"),
			want: []string{"a: u:q0 a:r0 u:q1", "b: u:b"},
		},
		{
			name: "parts none keeps ids",
			opts: Options{Parts: PartsNone},
			in:   sg("a_0", "human", "q0") + sg("a_1", "human", "q1"),
			want: []string{"a_0: u:q0", "a_1: u:q1"},
		},
		{
			name: "ids without or with several underscores",
			in:   sg("plain", "human", "1") + sg("a_b_c", "human", "2") + sg("_7", "human", "3") + sg("x_", "human", "4") + sg("a_b_07", "human", "5"),
			want: []string{"plain: u:1", "a_b_c: u:2", "_7: u:3", "x_: u:4", "a_b_07: u:5"},
		},
		{
			name: "duplicate part records",
			in:   sg("a_0", "human", "q0") + sg("a_0", "human", "q0") + sg("a_1", "gpt", "r"),
			want: []string{"a: u:q0 a:r"},
		},
		{
			name: "openai messages with content parts and tool messages",
			in: `{"messages":[{"role":"developer","content":"d"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]},` +
				`{"role":"assistant","content":null,"tool_calls":[]},{"role":"tool","content":"{}"},{"role":"assistant","content":"done"}]}` + "\n",
			want: []string{"in.jsonl:1: s:d u:a\nb a:done"},
		},
		{
			name:    "no user message",
			in:      sg("a", "gpt", "x", "gpt", "y"),
			want:    []string{},
			dropped: map[Reason]int{ReasonNoUser: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkConvert(t, tc.opts, tc.in, tc.want, tc.dropped)
		})
	}
}

func TestPartsMetadata(t *testing.T) {
	t.Parallel()
	convs, sum, _, err := convertString(t, Options{}, sg("a_2", "human", "2", "gpt", "3", "human", "4", "gpt", "5", "human", "6", "gpt", "7", "human", "8", "gpt", "9")+
		sg("a_0", "human", "q0", "gpt", "r0")+sg("a_10", "human", "q10"))
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 {
		t.Fatalf("got %v", shapes(convs))
	}
	want := map[string]any{"source": "sharegpt", "parts": []any{"a_0", "a_2", "a_10"}}
	if diff := cmp.Diff(want, convs[0].Meta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if sum.Records != 3 || sum.Conversations != 1 {
		t.Errorf("records %d conversations %d", sum.Records, sum.Conversations)
	}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	openai := `{"id":"o1","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}` + "\n"
	vllm := `[{"id":"v1","messages":[{"role":"user","content":"q"}]}]`
	sgArray := "[\n" + strings.TrimSpace(sg("s_0", "human", "q")) + ",\n" + strings.TrimSpace(sg("s_1", "gpt", "a")) + "\n]"
	for _, tc := range []struct {
		name, in   string
		from       Schema
		wantSource string
		want       []string
		malformed  int
	}{
		{"sharegpt jsonl", sg("s", "human", "q"), SchemaAuto, "sharegpt", []string{"s: u:q"}, 0},
		{"sharegpt array", sgArray, SchemaAuto, "sharegpt", []string{"s: u:q a:a"}, 0},
		{"openai jsonl", openai, SchemaAuto, "openai", []string{"o1: u:q a:a"}, 0},
		{"vllm list", vllm, SchemaAuto, "vllm", []string{"v1: u:q"}, 0},
		{"forced openai on sharegpt", sg("s", "human", "q"), SchemaOpenAI, "", []string{}, 1},
		{"forced sharegpt on vllm", vllm, SchemaShareGPT, "", []string{}, 1},
		{"forced vllm on jsonl", openai, SchemaVLLM, "vllm", []string{"o1: u:q a:a"}, 0},
		{"first record decides", openai + sg("s", "human", "q"), SchemaAuto, "openai", []string{"o1: u:q a:a"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			convs, sum, _, err := convertString(t, Options{From: tc.from}, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, shapes(convs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, c := range convs {
				if c.Meta["source"] != tc.wantSource {
					t.Errorf("source = %v, want %s", c.Meta["source"], tc.wantSource)
				}
			}
			if sum.Malformed != tc.malformed {
				t.Errorf("malformed = %d, want %d", sum.Malformed, tc.malformed)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	in := sg("a", "human", "q") +
		`{"id":"b","conversations":[{"from":"alien","value":"x"}]}` + "\n" +
		`{"id":"c","conversations":[{"from":"human","value":3}]}` + "\n" +
		`{"id":"d","conversations":[{"value":"x"}]}` + "\n" +
		`{"id":"e","conversations":"no"}` + "\n" +
		`{"id":"f","conversations":[{"from":"human","value":"x"}` + "\n" +
		`["not an object"]` + "\n" +
		`{"id":"g","extra":1}` + "\n" +
		sg("h", "human", "q")
	wantWarnings := []string{
		`warning: skipped in.jsonl:2: conversations[0].from: "alien" is not a known role`,
		`warning: skipped in.jsonl:3: conversations[0].value: expected string or array of content parts, got JSON number`,
		`warning: skipped in.jsonl:4: conversations[0].from: missing`,
		`warning: skipped in.jsonl:5: conversations: expected array, got JSON string`,
		`warning: skipped in.jsonl:6: invalid JSON`,
		`warning: skipped in.jsonl:7: (top level): expected object, got JSON array`,
		`warning: skipped in.jsonl:8: conversations: missing`,
	}
	t.Run("skip", func(t *testing.T) {
		t.Parallel()
		convs, sum, log, err := convertString(t, Options{}, in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a: u:q", "h: u:q"}, shapes(convs)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if sum.Malformed != 7 || sum.Records != 2 {
			t.Errorf("malformed %d records %d", sum.Malformed, sum.Records)
		}
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if len(lines) != len(wantWarnings) {
			t.Fatalf("warnings:\n%s", log)
		}
		for i, w := range wantWarnings {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("warning %d = %q, want prefix %q", i, lines[i], w)
			}
		}
	})
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		_, _, _, err := convertString(t, Options{Strict: true}, in)
		var je *jsonl.Error
		if !errors.As(err, &je) || je.Line != 2 || !strings.HasPrefix(err.Error(), `in.jsonl:2: conversations[0].from: "alien"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("warning cap", func(t *testing.T) {
		t.Parallel()
		_, sum, log, err := convertString(t, Options{MaxWarnings: 2}, in)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(log, "\n"); n != 3 || !strings.Contains(log, "more than 2 warnings") || sum.Malformed != 7 {
			t.Errorf("log (%d lines):\n%s", n, log)
		}
	})
	t.Run("truncated array keeps what came before", func(t *testing.T) {
		t.Parallel()
		convs, sum, log, err := convertString(t, Options{}, `[`+strings.TrimSpace(sg("a", "human", "q"))+`, {"id": "b", "conv`)
		if err != nil {
			t.Fatal(err)
		}
		if len(convs) != 1 || sum.Malformed != 1 || !strings.Contains(log, "in.jsonl:1: unexpected end of input") {
			t.Errorf("convs %v malformed %d log %s", shapes(convs), sum.Malformed, log)
		}
	})
}

func TestSampling(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 100 {
		in.WriteString(sg(fmt.Sprintf("c%03d", i), "human", "q"))
	}
	sample := func(seed uint64, n int) []string {
		convs, sum, _, err := convertString(t, Options{MaxItems: n, Seed: seed}, in.String())
		if err != nil {
			t.Fatal(err)
		}
		if want := max(100-n, 0); sum.Dropped[ReasonNotSampled] != want {
			t.Errorf("not_sampled = %d, want %d", sum.Dropped[ReasonNotSampled], want)
		}
		var ids []string
		for _, c := range convs {
			ids = append(ids, c.ID)
		}
		return ids
	}
	a, b, c := sample(1, 10), sample(1, 10), sample(2, 10)
	if len(a) != 10 || !cmp.Equal(a, b) {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	if cmp.Equal(a, c) {
		t.Errorf("seeds 1 and 2 gave the same sample %v", a)
	}
	for i := 1; i < len(a); i++ {
		if a[i-1] >= a[i] {
			t.Errorf("sample not in input order: %v", a)
		}
	}
	if all := sample(1, 1000); len(all) != 100 {
		t.Errorf("max-items above the count kept %d", len(all))
	}
	// Uniformity: over many seeds every position is picked about equally.
	counts := make([]int, 100)
	for seed := range uint64(400) {
		for _, id := range sample(seed, 10) {
			var i int
			fmt.Sscanf(id, "c%d", &i)
			counts[i]++
		}
	}
	for i, n := range counts {
		if n < 10 || n > 80 { // expected 40
			t.Errorf("position %d picked %d times in 400 samples of 10/100", i, n)
		}
	}
}

func TestTokenizer(t *testing.T) {
	t.Parallel()
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	convs, sum, _, err := convertString(t, Options{Tokenizer: tok}, sg("a", "system", "be brief", "human", "hello there", "gpt", "General Kenobi, you are a bold one."))
	if err != nil {
		t.Fatal(err)
	}
	c := convs[0]
	if c.Meta["tokenizer"] != "o200k_base" {
		t.Errorf("tokenizer meta = %v", c.Meta["tokenizer"])
	}
	total := 0
	for _, m := range c.Messages {
		want := tok.Count(m.Content)
		if m.Tokens != want || want == 0 {
			t.Errorf("%s tokens = %d, want %d", m.Role, m.Tokens, want)
		}
		if (m.Role == conv.RoleAssistant) != (m.OutputTokens == want) {
			t.Errorf("%s output_tokens = %d", m.Role, m.OutputTokens)
		}
		total += want
	}
	if sum.ConversationTokens.Len() != 1 || sum.ConversationTokens.Max() != total || sum.UserTokens.Len() != 1 || sum.AssistantTokens.Len() != 1 {
		t.Errorf("token stats %+v %+v %+v", sum.ConversationTokens, sum.UserTokens, sum.AssistantTokens)
	}
	// Without a tokenizer no target lengths are invented.
	convs, _, _, _ = convertString(t, Options{}, sg("a", "human", "hello", "gpt", "hi"))
	for _, m := range convs[0].Messages {
		if m.Tokens != 0 || m.OutputTokens != 0 {
			t.Errorf("token counts without a tokenizer: %+v", m)
		}
	}
}

func TestCompressedInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile(quirksFile)
	if err != nil {
		t.Fatal(err)
	}
	// The same data as gzip, zstd and as a plain JSON array: the outputs
	// must be identical.
	var outs []string
	for _, name := range []string{"q.jsonl.gz", "q.jsonl.zst", "q.json"} {
		path := filepath.Join(dir, name)
		o, err := iox.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if name == "q.json" {
			o.Write([]byte("[\n" + strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", ",\n") + "\n]\n"))
		} else {
			o.Write(data)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sum, err := Run(context.Background(), Options{Inputs: []string{path}, Open: memOpener(nil)}, conv.NewWriter(&out))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Records != 13 || sum.Written != 10 {
			t.Errorf("%s: records %d written %d", name, sum.Records, sum.Written)
		}
		outs = append(outs, out.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Error("gzip, zstd and array inputs gave different outputs")
	}
}

func TestMultipleInputsMergeAdjacentParts(t *testing.T) {
	t.Parallel()
	convs, sum, _, err := convertFiles(t, Options{Inputs: []string{"a.jsonl", "b.json"}},
		map[string]string{"a.jsonl": sg("x_0", "human", "q0", "gpt", "r0"), "b.json": "[" + strings.TrimSpace(sg("x_2", "human", "q1")) + "]"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x: u:q0 a:r0 u:q1"}, shapes(convs)); diff != "" {
		t.Error(diff)
	}
	if sum.Inputs != 2 || sum.Formats[SchemaShareGPT] != 2 {
		t.Errorf("inputs %d formats %v", sum.Inputs, sum.Formats)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Options{Inputs: []string{"in"}, Open: memOpener(map[string]string{"in": sg("a", "human", "q")})}, conv.NewWriter(&bytes.Buffer{}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	open := memOpener(nil)
	for _, o := range []Options{
		{Open: open, MinTurns: 5, MaxTurns: 2},
		{Open: open, MinContentLen: 9, MaxContentLen: 3},
		{Open: open, MaxItems: -1},
		{Open: open, From: "csv"},
		{Open: open, Parts: "some"},
		{Open: open, Alternation: "fix"},
		{},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// fuzzRun converts arbitrary input and checks the invariants every run
// must keep: no panic, valid output, counts that add up.
func fuzzRun(t *testing.T, data []byte, opts Options) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			panic(fmt.Sprintf("run did not finish in 30s on %q", data))
		}
	}()
	convs, sum, _, err := convertString(t, opts, string(data))
	if err != nil {
		t.Fatalf("non-strict run failed: %v", err)
	}
	for _, c := range convs {
		if err := c.Validate(); err != nil {
			t.Fatalf("invalid conversation written: %v", err)
		}
		if c.Messages[0].Role == conv.RoleAssistant {
			t.Fatalf("conversation %q starts with the assistant", c.ID)
		}
		if err := toolPairs(c.Messages); err != nil {
			t.Fatalf("conversation %q: %v", c.ID, err)
		}
	}
	if sum.Written != len(convs) {
		t.Fatalf("written %d, decoded %d", sum.Written, len(convs))
	}
}

// toolPairs checks that every tool message answers a call of the
// assistant message before its run of tool messages, and that every call
// (but those of the last message) is answered.
func toolPairs(msgs []conv.Message) error {
	for i, m := range msgs {
		if len(m.ToolCalls) > 0 && i < len(msgs)-1 {
			answered := map[string]bool{}
			for j := i + 1; j < len(msgs) && msgs[j].Role == conv.RoleTool; j++ {
				answered[msgs[j].ToolCallID] = true
			}
			for _, c := range m.ToolCalls {
				if !answered[c.ID] {
					return fmt.Errorf("messages[%d]: call %q not answered", i, c.ID)
				}
			}
		}
		if m.Role == conv.RoleTool {
			j := i - 1
			for j >= 0 && msgs[j].Role == conv.RoleTool {
				j--
			}
			if j < 0 || !slices.ContainsFunc(msgs[j].ToolCalls, func(c conv.ToolCall) bool { return c.ID == m.ToolCallID }) {
				return fmt.Errorf("messages[%d]: tool result for %q answers no call before it", i, m.ToolCallID)
			}
		}
	}
	return nil
}

func FuzzRunShareGPTJSONL(f *testing.F) {
	data, err := os.ReadFile(quirksFile)
	if err != nil {
		f.Fatal(err)
	}
	// Real records with their values cut short: the fuzzer stalls on
	// multi-kilobyte seeds.
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			f.Fatal(err)
		}
		turns, _ := rec["conversations"].([]any)
		for _, t := range turns {
			if m, ok := t.(map[string]any); ok {
				if v, ok := m["value"].(string); ok && len(v) > 40 {
					m["value"] = string([]rune(v)[:10])
				}
			}
		}
		if len(turns) > 3 {
			rec["conversations"] = turns[:3]
		}
		delete(rec, "conversation_metadata")
		f.Add(mustJSON(rec))
	}
	f.Add([]byte(sg("a_1", "human", "q") + sg("a_0", "gpt", "r") + sg("a", "system", "s")))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRun(t, data, Options{Dedupe: true}) })
}

func FuzzRunShareGPTArray(f *testing.F) {
	f.Add([]byte("[\n" + strings.TrimSpace(sg("s_0", "human", "q")) + ",\n" + strings.TrimSpace(sg("s_1", "gpt", "a")) + "\n]"))
	f.Add([]byte(`[{"id":"x","conversations":[{"from":"human","value":"\u00e9\n"}]}, 3, "x"]`))
	f.Add([]byte(`[{"id":"w_1","conversations":[{"from":"gpt","value":"long"},{"from":"human","value":"q"}]},{"id":"w_0","system":"s","conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"long"}]},{"id":"identity_0","conversations":[{"from":"human","value":"q"}]},{"id":"identity_1","conversations":[{"from":"human","value":"q"}]}]`))
	f.Add([]byte(`[{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"[{\"name\":\"f\",\"arguments\":{}}]"},{"from":"observation","value":"r"},{"from":"gpt","value":"a"}],"tools":"[{\"name\":\"f\"}]"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRun(t, data, Options{Parts: PartsAll, Alternation: AlternationDrop})
	})
}

func FuzzRunOpenAI(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":"b"}]}`))
	f.Add([]byte(`[{"id":"v","messages":[{"role":"user","content":"q"},{"role":"tool","content":null}]}]`))
	f.Add([]byte(`{"id":"o","system":"s","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"x":1}}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRun(t, data, Options{From: SchemaOpenAI, MaxTurns: 3, KeepEmpty: true})
	})
}

// TestInvalidUTF8AgreesWithMtrun: bytes that are not UTF-8, or an unpaired
// surrogate escape, are repaired to U+FFFD, counted and warned about with
// file:line: field, and with --strict rejected with the error mtrun's
// reader gives for the same line (issue 24: mtconvert repaired them
// silently and exited 0 while mtrun rejected them).
func TestInvalidUTF8AgreesWithMtrun(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"},{\"role\":\"assistant\",\"content\":\"ok\"}]}",
		`{"id":"a","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x\ud800y"}]}`,
	} {
		r := conv.NewReader(strings.NewReader(line+"\n"), "in.jsonl")
		for r.Scan() {
		}
		mtrunErr := r.Err()
		if mtrunErr == nil {
			t.Fatalf("%q: conv.Reader accepts it", line)
		}
		convs, sum, log, err := convertFiles(t, Options{}, map[string]string{"in.jsonl": line + "\n"})
		if err != nil || len(convs) != 1 || sum.Repaired != 1 || !strings.Contains(convs[0].Messages[0].Content+convs[0].Messages[1].Content, "\ufffd") {
			t.Errorf("%q: err %v, %d conversations, %d repaired; want 1 and 1", line, err, len(convs), sum.Repaired)
		}
		if want := strings.TrimPrefix(mtrunErr.Error(), "in.jsonl:1: "); !strings.Contains(log, "in.jsonl:1: "+want+": replaced by U+FFFD") {
			t.Errorf("%q: warnings %q, want one naming in.jsonl:1: %s", line, log, want)
		}
		_, _, _, err = convertFiles(t, Options{Strict: true}, map[string]string{"in.jsonl": line + "\n"})
		if err == nil || err.Error() != mtrunErr.Error() {
			t.Errorf("%q --strict: %v, want mtrun's %v", line, err, mtrunErr)
		}
	}
}
