package replay

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
)

// TestRequestBody replays one turn per case and checks the exact body and
// headers the server received: the defaults are strictly OpenAI-schema,
// and every extension appears only when asked for.
func TestRequestBody(t *testing.T) {
	t.Parallel()
	temp := 0.7
	seed := int64(42)
	hdr := http.Header{"X-Team": {"perf"}}
	c := conv.Conversation{ID: "conv-1", Messages: []conv.Message{
		{Role: conv.RoleSystem, Content: "be brief"},
		{Role: conv.RoleUser, Content: "hello"},
		{Role: conv.RoleAssistant, Content: "dataset answer", OutputTokens: 5},
	}}
	for _, tc := range []struct {
		name    string
		opts    Options
		path    string
		want    map[string]any // exact body, messages/prompt excluded
		prompt  string         // completions: the prompt text
		headers map[string]string
		noHdrs  []string
	}{
		{
			name: "default stream",
			opts: Options{Stream: true, IncludeUsage: true},
			path: "/v1/chat/completions",
			want: map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
			noHdrs: []string{"X-Session-Id", "Authorization"},
		},
		{
			name:   "stream without usage",
			opts:   Options{Stream: true},
			path:   "/v1/chat/completions",
			want:   map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": true},
			noHdrs: []string{"X-Session-Id"},
		},
		{
			name: "continuous usage",
			opts: Options{Stream: true, IncludeUsage: true, ContinuousUsage: true},
			path: "/v1/chat/completions",
			want: map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}},
		},
		{
			name: "no stream",
			opts: Options{},
			path: "/v1/chat/completions",
			want: map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": false},
		},
		{
			name: "max_completion_tokens",
			opts: Options{MaxCompletionTokensField: true},
			path: "/v1/chat/completions",
			want: map[string]any{"model": "fake-model", "max_completion_tokens": 5.0, "stream": false},
		},
		{
			name:   "completions",
			opts:   Options{API: openai.APICompletions, Stream: true, IncludeUsage: true, MaxCompletionTokensField: true},
			path:   "/v1/completions",
			prompt: "System: be brief\n\nUser: hello\n\nAssistant:",
			want: map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
		},
		{
			name: "sampling and length options",
			opts: Options{Temperature: &temp, Seed: &seed, IgnoreEOS: true, SendMinTokens: true, FixedMaxTokens: 9},
			path: "/v1/chat/completions",
			want: map[string]any{"model": "fake-model", "max_tokens": 9.0, "min_tokens": 9.0, "stream": false,
				"temperature": 0.7, "seed": 42.0, "ignore_eos": true},
		},
		{
			name: "extra body merged, flags win",
			opts: Options{ExtraBody: map[string]any{"top_k": 5.0, "model": "other", "chat_template_kwargs": map[string]any{"enable_thinking": false}}},
			path: "/v1/chat/completions",
			want: map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": false, "top_k": 5.0,
				"chat_template_kwargs": map[string]any{"enable_thinking": false}},
		},
		{
			name:    "conversation id field and session header",
			opts:    Options{SendConversationID: true, SendSessionHeader: true},
			path:    "/v1/chat/completions",
			want:    map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": false, "conversation_id": "conv-1"},
			headers: map[string]string{"X-Session-Id": "conv-1"},
		},
		{
			name:    "session header only",
			opts:    Options{SendSessionHeader: true},
			path:    "/v1/chat/completions",
			want:    map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": false},
			headers: map[string]string{"X-Session-Id": "conv-1"},
		},
		{
			name:    "headers and api key",
			opts:    Options{APIKey: "sk-secret-123", Headers: hdr},
			path:    "/v1/chat/completions",
			want:    map[string]any{"model": "fake-model", "max_tokens": 5.0, "stream": false},
			headers: map[string]string{"Authorization": "Bearer sk-secret-123", "X-Team": "perf", "Content-Type": "application/json"},
			noHdrs:  []string{"X-Session-Id"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, nil)
			o := tc.opts
			o.URL = fs.URL
			res := replayT(t, o, []conv.Conversation{c})
			reqs := fs.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			req := reqs[0]
			if req.Path != tc.path {
				t.Errorf("path %s, want %s", req.Path, tc.path)
			}
			got := maps(req.Body)
			if tc.prompt != "" {
				if got["prompt"] != tc.prompt {
					t.Errorf("prompt %q, want %q", got["prompt"], tc.prompt)
				}
				delete(got, "prompt")
			} else {
				want := []conv.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}}
				if !reflect.DeepEqual(req.Msgs, want) {
					t.Errorf("messages %+v, want %+v", req.Msgs, want)
				}
				// Messages carry role and content only (no dataset fields).
				raw := string(req.Raw)
				for _, f := range []string{"output_tokens", "think_time_ms", `"tokens"`} {
					if strings.Contains(raw, f) {
						t.Errorf("body has dataset field %s: %s", f, raw)
					}
				}
				delete(got, "messages")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("body keys %v\n got %v\nwant %v", keys(got), got, tc.want)
			}
			for k, v := range tc.headers {
				if g := req.Header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			for _, k := range tc.noHdrs {
				if g := req.Header.Get(k); g != "" {
					t.Errorf("header %s = %q, want none", k, g)
				}
			}
			if len(res.recs) != 1 || !res.recs[0].OK() || res.recs[0].ConversationID != "conv-1" {
				t.Fatalf("records %+v", res.recs)
			}
			rec := res.recs[0]
			wantMax, _ := tc.want["max_tokens"].(float64)
			if v, ok := tc.want["max_completion_tokens"].(float64); ok {
				wantMax = v
			}
			if rec.MaxTokens != int(wantMax) {
				t.Errorf("record max_tokens %d, want %g", rec.MaxTokens, wantMax)
			}
			if tc.opts.SendMinTokens != (rec.MinTokens > 0) {
				t.Errorf("record min_tokens %d", rec.MinTokens)
			}
			if tc.opts.APIKey != "" {
				b, _ := json.Marshal(res.recs)
				out, _ := json.Marshal(res.convs)
				for _, s := range []string{string(b), string(out), res.log} {
					if strings.Contains(s, tc.opts.APIKey) {
						t.Errorf("api key leaked into outputs: %s", s)
					}
				}
			}
		})
	}
}

// maps round-trips v through JSON so nested values compare as generic maps.
func maps(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

func keys(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// TestNoStreamAndCompletions runs whole conversations in the non-streaming
// and the completions modes and checks the answers and timings recorded.
func TestNoStreamAndCompletions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   Options
		chunks int
	}{
		{"chat no-stream", Options{}, 1},
		{"completions stream", Options{API: openai.APICompletions, Stream: true, IncludeUsage: true}, 3},
		{"completions no-stream", Options{API: openai.APICompletions}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, nil)
			o := tc.opts
			o.URL = fs.URL
			res := replayT(t, o, simpleConvs(1, 3))
			if len(res.recs) != 3 {
				t.Fatalf("%d records, want 3", len(res.recs))
			}
			for i, r := range res.recs {
				if !r.OK() || r.Chunks != tc.chunks || r.FinishReason != "stop" || r.TTFTNs == nil || *r.TTFTNs <= 0 ||
					r.PromptTokens == nil || r.CompletionTokens == nil || *r.CompletionTokens != 3 || r.Turn != i {
					t.Errorf("record %d: %+v", i, r)
				}
			}
			reqs := fs.requests()
			if tc.opts.API == openai.APICompletions {
				// Turn 2's prompt holds turn 1's real answer.
				p, _ := reqs[1].Body["prompt"].(string)
				want := "User: c0 user 0\n\nAssistant: " + reqs[0].Answers[0] + "\n\nUser: c0 user 1\n\nAssistant:"
				if p != want {
					t.Errorf("turn 1 prompt %q, want %q", p, want)
				}
			} else if got := reqs[2].Msgs[3].Content; got != reqs[1].Answers[0] {
				t.Errorf("turn 2 history answer %q, want %q", got, reqs[1].Answers[0])
			}
		})
	}
}

func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in       string
		min, max time.Duration
	}{
		{"", 0, 0},
		{"2", 2 * time.Second, 2 * time.Second},
		{"0.25", 250 * time.Millisecond, 250 * time.Millisecond},
		{"-1", 0, 0},
		{"soon", 0, 0},
		{time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat), time.Second, 3 * time.Second},
		{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0, 0},
	} {
		if got := retryAfter(http.Header{"Retry-After": {tc.in}}); got < tc.min || got > tc.max {
			t.Errorf("retryAfter(%q) = %v, want in [%v, %v]", tc.in, got, tc.min, tc.max)
		}
	}
	// Retry-After-Ms wins over Retry-After.
	h := http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"150"}}
	if got := retryAfter(h); got != 150*time.Millisecond {
		t.Errorf("retryAfter(%v) = %v, want 150ms", h, got)
	}
}

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{429, "", record.ErrRateLimit},
		{500, "", record.ErrHTTP5xx},
		{503, "", record.ErrHTTP5xx},
		{400, `{"error":{"message":"This model's maximum context length is 100 tokens"}}`, record.ErrContext},
		{400, `{"error":{"code":"context_length_exceeded"}}`, record.ErrContext},
		{400, `{"error":{"message":"bad temperature"}}`, record.ErrHTTP4xx},
		{404, "", record.ErrHTTP4xx},
	} {
		if got := classifyStatus(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("classifyStatus(%d, %s) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	for class, want := range map[string]bool{
		record.ErrConnect: true, record.ErrTimeout: true, record.ErrRateLimit: true, record.ErrHTTP5xx: true,
		record.ErrStream: true, record.ErrHTTP4xx: false, record.ErrContext: false, record.ErrCanceled: false,
	} {
		if retryable(class) != want {
			t.Errorf("retryable(%q) = %v", class, !want)
		}
	}
}

// fixedCounter counts one token per byte.
type fixedCounter struct{}

func (fixedCounter) Count(s string) int { return len(s) }

func TestOutputTokens(t *testing.T) {
	t.Parallel()
	ref := &conv.Message{Role: conv.RoleAssistant, Content: "12345678", OutputTokens: 20}
	noTarget := &conv.Message{Role: conv.RoleAssistant, Content: "12345678"}
	for _, tc := range []struct {
		name string
		o    Options
		ref  *conv.Message
		want int
	}{
		{"dataset target", Options{}, ref, 20},
		{"no reference", Options{}, nil, 0},
		{"no target, no tokenizer", Options{}, noTarget, 0},
		{"no target, tokenizer", Options{Tokenizer: fixedCounter{}}, noTarget, 8},
		{"fixed wins", Options{FixedMaxTokens: 3, LimitMinTokens: 50}, ref, 3},
		{"limit max", Options{LimitMaxTokens: 10}, ref, 10},
		{"limit max without target", Options{LimitMaxTokens: 10}, nil, 10},
		{"limit min", Options{LimitMinTokens: 30}, ref, 30},
	} {
		count := func() int { return tc.o.count(tc.ref.Content) }
		if got := tc.o.outputTokens(tc.ref, count); got != tc.want {
			t.Errorf("%s: outputTokens = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    Options
		want string // substring of the error; "" for valid
	}{
		{Options{URL: "http://x"}, ""},
		{Options{}, "url: missing"},
		{Options{URL: "http://x", API: "responses"}, "api:"},
		{Options{URL: "http://x", Sampling: "lifo"}, "conversation sampling"},
		{Options{URL: "http://x", OnFailure: "retry"}, "on-failure"},
		{Options{URL: "http://x", Schedule: schedule.UserGap{N: 2}}, "users: 2 users with a gap of 0s"},
		{Options{URL: "http://x", Schedule: schedule.Rate{}}, "rate: 0 sessions a second"},
		{Options{URL: "http://x", LimitMinTokens: 10, LimitMaxTokens: 5}, "clamp-min-tokens"},
		{Options{URL: "http://x", Loop: true}, "loop"},
		{Options{URL: "http://x", Loop: true, MaxRequests: 3}, ""},
	} {
		err := tc.o.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tc.o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one containing %q", tc.o, err, tc.want)
		}
	}
}

func TestParseThink(t *testing.T) {
	t.Parallel()
	planned := 1500 * time.Millisecond
	for _, tc := range []struct {
		spec     string
		rate     float64
		min, max time.Duration // bounds of 200 draws
		wantErr  string
	}{
		{spec: "", min: planned, max: planned},
		{spec: "file", min: planned, max: planned},
		{spec: "none", min: 0, max: 0},
		{spec: "constant:2s", min: 2 * time.Second, max: 2 * time.Second},
		{spec: "uniform:1s:3s", min: time.Second, max: 3 * time.Second},
		{spec: "exponential:mean=100ms", min: 0, max: 5 * time.Second},
		{spec: "exponential:100ms", min: 0, max: 5 * time.Second},
		{rate: 10, min: 0, max: 5 * time.Second},
		{spec: "uniform:3s:1s", wantErr: "is less than min"},
		{spec: "uniform:1s", wantErr: "max: missing"},
		{spec: "constant", wantErr: "value: missing"},
		{spec: "constant:abc", wantErr: "is not a number or a duration"},
		{spec: "gamma:1s", wantErr: `unknown distribution "gamma"`},
		{spec: "constant:1s", rate: 2, wantErr: "exclude each other"},
		{rate: -1, wantErr: "negative"},
	} {
		f, err := ParseThink(tc.spec, tc.rate)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseThink(%q, %g): error %v, want %q", tc.spec, tc.rate, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseThink(%q, %g): %v", tc.spec, tc.rate, err)
			continue
		}
		var sum time.Duration
		rng := rand.New(rand.NewPCG(1, 2))
		for range 200 {
			d := f(planned, rng)
			if d < tc.min || d > tc.max {
				t.Errorf("ParseThink(%q, %g) drew %v, want in [%v, %v]", tc.spec, tc.rate, d, tc.min, tc.max)
				break
			}
			sum += d
		}
		if strings.HasPrefix(tc.spec, "exponential") || tc.rate > 0 {
			if mean := sum / 200; mean < 60*time.Millisecond || mean > 150*time.Millisecond {
				t.Errorf("ParseThink(%q, %g): mean of 200 draws %v, want about 100ms", tc.spec, tc.rate, mean)
			}
		}
	}
}
