package conv

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/mtkit/mtkit/internal/iox"
)

func readAll(t *testing.T, in string) ([]Conversation, error) {
	t.Helper()
	r := NewReader(strings.NewReader(in), "in.jsonl")
	var out []Conversation
	for r.Scan() {
		out = append(out, r.Conversation())
	}
	return out, r.Err()
}

func TestReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      string
		ids     []string
		wantErr string
	}{
		{"jsonl", `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\n" + `{"id":"b","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y","output_tokens":3}]}`, []string{"a", "b"}, ""},
		{"blank lines and CRLF", "\r\n" + `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\r\n\r\n", []string{"a"}, ""},
		{"no final newline", `{"id":"a","messages":[{"role":"user","content":"hi"}]}`, []string{"a"}, ""},
		{"vllm list", ` [ {"id":"a","messages":[{"role":"user","content":"hi"}]},` + "\n" + `{"id":"b","messages":[{"role":"user","content":"x"}]} ]`, []string{"a", "b"}, ""},
		{"empty list", `[]`, nil, ""},
		{"empty input", ``, nil, ""},
		{"bad role", `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\n" + `{"id":"b","messages":[{"role":"bot","content":"x"}]}`, []string{"a"}, `in.jsonl:2: messages[0].role: "bot" is not system, user, assistant or tool`},
		{"missing id", `{"messages":[{"role":"user","content":"hi"}]}`, nil, "in.jsonl:1: id: missing or empty"},
		{"no messages", `{"id":"a"}`, nil, "in.jsonl:1: messages: missing or empty"},
		{"wrong type", `{"id":"a","messages":[{"role":"user","content":5}]}`, nil, "in.jsonl:1: messages.content: expected string, got JSON number"},
		{"negative output", `{"id":"a","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","output_tokens":-1}]}`, nil, "in.jsonl:1: messages[1].output_tokens: -1 is negative"},
		// Issue 24: a far timestamp overflowed the trace clock (sent at t = 0).
		{"timestamp past the clock", `{"id":"a","messages":[{"role":"user","content":"x","timestamp_ms":1e18}]}`, nil, "in.jsonl:1: messages[0].timestamp_ms: 1e+18 is more than"},
		{"broken json line 3", `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\n\n" + `{"id":`, []string{"a"}, "in.jsonl:3: invalid JSON"},
		{"list element error", `[{"id":"a","messages":[{"role":"user","content":"hi"}]}, {"id":"b","messages":[]}]`, []string{"a"}, "in.jsonl:2: list element 2: messages: missing or empty"},
		{"no user message", `{"id":"a","messages":[{"role":"system","content":"s"},{"role":"assistant","content":"y"}]}`, nil, "in.jsonl:1: messages: no user message"},
		{"system after first turn", `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\n" + `{"id":"b","messages":[{"role":"system","content":"s"},{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"system","content":"late"}]}`, []string{"a"}, "in.jsonl:2: messages[3].role: system message after the conversation started"},
		{"two leading system messages", `{"id":"a","messages":[{"role":"system","content":"s"},{"role":"system","content":"t"},{"role":"user","content":"x"}]}`, []string{"a"}, ""},
		{"assistant first and user twice", `{"id":"a","messages":[{"role":"assistant","content":"hello"},{"role":"user","content":"x"},{"role":"user","content":"y"}]}`, []string{"a"}, ""},
		{"duplicate id", `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\n" + `{"id":"b","messages":[{"role":"user","content":"x"}]}` + "\n\n" + `{"id":"a","messages":[{"role":"user","content":"again"}]}`, []string{"a", "b"}, `in.jsonl:4: id: "a" already used by the conversation at line 1`},
		{"duplicate id in list", `[{"id":"a","messages":[{"role":"user","content":"hi"}]}, {"id":"a","messages":[{"role":"user","content":"x"}]}]`, []string{"a"}, `in.jsonl:2: list element 2: id: "a" already used by the conversation at list element 1`},
		{"invalid utf-8 content", `{"id":"a","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":"caf` + "\xe9" + `"}]}`, nil, "in.jsonl:1: messages[2].content: invalid UTF-8"},
		{"invalid utf-8 id", `{"id":"` + "\xff" + `","messages":[{"role":"user","content":"hi"}]}`, nil, "in.jsonl:1: id: invalid UTF-8"},
		{"invalid utf-8 metadata key", `{"id":"a","messages":[{"role":"user","content":"hi"}],"metadata":{"src":{"k` + "\xc3" + `":1}}}`, nil, `in.jsonl:1: metadata.src: key "k\ufffd": invalid UTF-8`},
		{"invalid utf-8 top-level key", `{"id":"a","messages":[{"role":"user","content":"hi"}],"` + "\xff" + `":1}`, nil, `in.jsonl:1: key "\ufffd": invalid UTF-8`},
		{"unpaired surrogate", `{"id":"a","messages":[{"role":"user","content":"x\\ud800 \ud83d"}]}`, nil, `in.jsonl:1: messages[0].content: unpaired UTF-16 surrogate \ud83d`},
		{"paired surrogate and escapes", `{"id":"a","messages":[{"role":"user","content":"\ud83d\ude00 \\ud800 \u00e9 \"\u005c"}]}`, []string{"a"}, ""},
		{"unclosed list", `[{"id":"a","messages":[{"role":"user","content":"hi"}]}`, []string{"a"}, "in.jsonl:2: JSON list not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := readAll(t, tc.in)
			var ids []string
			for _, c := range got {
				ids = append(ids, c.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
				t.Errorf("ids = %v, want %v", ids, tc.ids)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want prefix %q", err, tc.wantErr)
			}
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("word ", 2<<20) // 10 MB
	in := `{"id":"big","messages":[{"role":"user","content":"` + big + `"}]}` + "\n" + `{"id":"next","messages":[{"role":"user","content":"x"}]}`
	got, err := readAll(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].Messages[0].Content) != len(big) || got[1].ID != "next" {
		t.Fatalf("got %d conversations", len(got))
	}
}

func TestReaderCompressedRoundTrip(t *testing.T) {
	t.Parallel()
	want := []Conversation{
		{ID: "a", Messages: []Message{{Role: RoleSystem, Content: "s"}, {Role: RoleUser, Content: "héllo", Tokens: 2}, {Role: RoleAssistant, Content: "<b>&</b>", OutputTokens: 7}}},
		{ID: "b", Messages: []Message{{Role: RoleUser, Content: "x", ThinkTimeMs: 1500}}, Meta: map[string]any{"k": "v"}},
	}
	var plain bytes.Buffer
	w := NewWriter(&plain)
	for i := range want {
		if err := w.Write(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(plain.String(), "<b>&</b>") {
		t.Errorf("HTML was escaped: %s", plain.String())
	}
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(plain.Bytes())
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(plain.Bytes())
	zw.Close()
	for name, data := range map[string][]byte{"plain": plain.Bytes(), "gzip": gz.Bytes(), "zstd": zs.Bytes()} {
		in, err := iox.Open("-", bytes.NewReader(data))
		if err != nil {
			t.Fatal(name, err)
		}
		r := NewReader(in, in.Name)
		var got []Conversation
		for r.Scan() {
			got = append(got, r.Conversation())
		}
		in.Close()
		if r.Err() != nil || len(got) != 2 || got[0].Messages[2].OutputTokens != 7 || got[1].Messages[0].ThinkTimeMs != 1500 || got[1].Meta["k"] != "v" {
			t.Errorf("%s: got %+v, err %v", name, got, r.Err())
		}
	}
}

func TestUserTurns(t *testing.T) {
	t.Parallel()
	c := Conversation{ID: "a", Messages: []Message{{Role: RoleSystem}, {Role: RoleUser}, {Role: RoleAssistant}, {Role: RoleUser}}}
	if n := c.UserTurns(); n != 2 {
		t.Errorf("UserTurns = %d, want 2", n)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"id":"a","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`[{"id":"a","messages":[{"role":"user","content":"hi"}]}]`))
	f.Add([]byte("[\n{\"id\":1}"))
	f.Add([]byte("{\"id\":\"a\",\"messages\":[{\"role\":\"assistant\",\"output_tokens\":1e9}]}\n\n{"))
	f.Add([]byte("{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"\\ud800\xff\"}],\"metadata\":{\"k\":[\"\xc3\"]}}"))
	f.Add([]byte("{\"id\":\"a\",\"messages\":[{\"role\":\"user\"},{\"role\":\"system\"}]}\n{\"id\":\"a\",\"messages\":[{\"role\":\"user\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		ids := map[string]bool{}
		for r.Scan() {
			c := r.Conversation()
			if err := c.Validate(); err != nil {
				t.Fatalf("Scan returned an invalid conversation: %v", err)
			}
			if err := checkRoles(c.Messages); err != nil {
				t.Fatalf("Scan returned a conversation with roles out of order: %v", err)
			}
			if ids[c.ID] {
				t.Fatalf("Scan returned id %q twice", c.ID)
			}
			ids[c.ID] = true
			for _, m := range c.Messages {
				if strings.ContainsRune(m.Content, utf8.RuneError) && !bytes.Contains(data, []byte("\uFFFD")) &&
					!bytes.Contains(data, []byte("\ufffd")) && !bytes.Contains(data, []byte("\xef\xbf\xbd")) {
					t.Fatalf("content %q holds U+FFFD that the input did not", m.Content)
				}
			}
		}
		if err := r.Err(); err != nil && !strings.HasPrefix(err.Error(), "fuzz:") {
			t.Fatalf("error without location: %v", err)
		}
		if r.Scan() {
			t.Fatal("Scan true after end")
		}
	})
}

func TestCheckRoles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		roles   string
		wantErr string
	}{
		{"user", ""},
		{"system user assistant user assistant", ""},
		{"user assistant tool assistant user", ""},
		{"user assistant tool tool assistant", ""},
		{"assistant user", ""},
		{"system system user", ""},
		{"system", "messages: no user message"},
		{"assistant tool", "messages: no user message"},
		{"user system", "messages[1].role: system message after"},
		{"user assistant user system", "messages[3].role: system message after"},
		{"tool user", "messages[0].role: tool message not after an assistant message"},
		{"user tool assistant", "messages[1].role: tool message not after an assistant message"},
		{"system tool user", "messages[1].role: tool message not after"},
	} {
		var msgs []Message
		for r := range strings.FieldsSeq(tc.roles) {
			msgs = append(msgs, Message{Role: r})
		}
		err := checkRoles(msgs)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.roles, err)
		case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want prefix %q", tc.roles, err, tc.wantErr)
		}
	}
}
