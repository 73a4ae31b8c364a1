package conv

import (
	"bytes"
	"strings"
	"testing"

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
		{"negative output", `{"id":"a","messages":[{"role":"assistant","content":"","output_tokens":-1}]}`, nil, "in.jsonl:1: messages[0].output_tokens: -1 is negative"},
		{"broken json line 3", `{"id":"a","messages":[{"role":"user","content":"hi"}]}` + "\n\n" + `{"id":`, []string{"a"}, "in.jsonl:3: invalid JSON"},
		{"list element error", `[{"id":"a","messages":[{"role":"user","content":"hi"}]}, {"id":"b","messages":[]}]`, []string{"a"}, "in.jsonl:2: list element 2: messages: missing or empty"},
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
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		n := 0
		for r.Scan() {
			c := r.Conversation()
			if err := c.Validate(); err != nil {
				t.Fatalf("Scan returned an invalid conversation: %v", err)
			}
			n++
		}
		if err := r.Err(); err != nil && !strings.HasPrefix(err.Error(), "fuzz:") {
			t.Fatalf("error without location: %v", err)
		}
		if r.Scan() {
			t.Fatal("Scan true after end")
		}
	})
}
