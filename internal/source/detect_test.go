package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
)

// TestDetect is the detection table: which format each head is read as.
func TestDetect(t *testing.T) {
	t.Parallel()
	long := strings.Repeat(`{"role":"user","content":"`+strings.Repeat("x", 1000)+`"},`, 100) // > DetectBytes
	for _, tc := range []struct {
		name, head, want string // want "": an error
		err              error
	}{
		{"conversation jsonl", `{"id":"a","messages":[{"role":"user","content":"q"}]}` + "\n", "conversations", nil},
		{"conversation, keys reordered", `{"messages":[],"id":"a"}`, "conversations", nil},
		{"conversation cut in its first line", `{"id":"a","messages":[` + long, "conversations", nil},
		{"vllm list", "[\n  {\"id\": \"v1\", \"messages\": []}\n]", "vllm", nil},
		{"vllm list cut", `[{"id":"v1","messages":[` + long, "vllm", nil},
		{"openai jsonl", `{"messages":[{"role":"user","content":"q"}]}`, "openai", nil},
		{"openai list", `[{"messages":[{"role":"user","content":"q"}]}]`, "openai", nil},
		{"sharegpt list", `[{"id":"x","conversations":[{"from":"human","value":"q"}]}]`, "sharegpt", nil},
		{"sharegpt jsonl", `{"id":"x","conversations":[]}` + "\n" + `{"id":"y"`, "sharegpt", nil},
		{"sharegpt singular key", `{"conversation":[{"from":"human","value":"q"}]}`, "sharegpt", nil},
		{"sharegpt with messages too", `{"id":"x","conversations":[],"messages":[]}`, "sharegpt", nil},
		{"generate by filetype", "{\n  \"filetype\": \"generate_conversations\",\n  \"num_conversations\": 2\n}", "generate", nil},
		{"generate by prompt_input", `{"prompt_input": {"num_turns": {"distribution": "constant", "value": 2}}}`, "generate", nil},
		{"generate-like with messages", `{"prompt_input": {}, "messages": [], "id": "a"}`, "conversations", nil},
		{"other filetype", `{"filetype": "something_else"}`, "", ErrUnknownFormat},
		{"empty", "", "", ErrEmpty},
		{"blank", "\n\n  \t", "", ErrEmpty},
		{"text", "hello\n", "", ErrUnknownFormat},
		{"number list", "[1, 2, 3]", "", ErrUnknownFormat},
		{"empty list", "[]", "", ErrUnknownFormat},
		{"broken json after the keys", `{"id": "a", "messages": }`, "conversations", nil}, // the reader locates the error
		{"broken json", `{"id" "a"}`, "", ErrUnknownFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			head := []byte(tc.head)
			if len(head) > DetectBytes {
				head = head[:DetectBytes]
			}
			f, err := Detect("in.json", head)
			switch {
			case tc.want != "" && (err != nil || f.Name != tc.want):
				t.Errorf("detected %q, %v; want %q", f.Name, err, tc.want)
			case tc.want == "" && !errors.Is(err, tc.err):
				t.Errorf("detected %q, %v; want %v", f.Name, err, tc.err)
			case tc.want == "" && !strings.HasPrefix(err.Error(), "in.json"):
				t.Errorf("error %q does not name the input", err)
			}
		})
	}
}

// TestDetectTraces: the trace fixtures are each detected as their format
// by Open (one match among every registered format) and are timed.
func TestDetectTraces(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{
		"testdata/traces/azure_llm_2023_code_head500.csv":     "azure",
		"testdata/traces/bailian_constructed.jsonl":           "bailian",
		"testdata/traces/burstgpt_constructed.csv":            "burstgpt",
		"testdata/traces/mooncake_conversation_head300.jsonl": "mooncake",
	} {
		in, err := Open(file, "", nil, Options{})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if in.Format.Name != want || !in.Timed() {
			t.Errorf("%s: detected %q, timed %v; want %q, timed", file, in.Format.Name, in.Timed(), want)
		}
		in.Close()
	}
}

// The test-only format below shows that a format is one file: once
// registered, it is found by name and by detection with no other change.
// It reads lines "ID<TAB>prompt" after a "#tsv-sessions" header.
func init() {
	Register(Format{
		Name: "test-tsv",
		Doc:  "test only: #tsv-sessions, then ID<TAB>prompt lines",
		Detect: func(name string, head []byte) bool {
			return strings.HasPrefix(string(head), "#tsv-sessions\n") || strings.HasSuffix(name, ".tsvsessions")
		},
		Open: func(r io.Reader, name string, _ Options) (Source, error) {
			return &tsvSource{sc: bufio.NewScanner(r), name: name}, nil
		},
	})
}

type tsvSource struct {
	sc   *bufio.Scanner
	name string
	line int
	err  error
}

func (s *tsvSource) Next() (conv.Conversation, bool) {
	for s.err == nil && s.sc.Scan() {
		s.line++
		text := s.sc.Text()
		if text == "#tsv-sessions" && s.line == 1 {
			continue
		}
		id, prompt, ok := strings.Cut(text, "\t")
		if !ok {
			s.err = fmt.Errorf("%s:%d: prompt: missing (no tab)", s.name, s.line)
			return conv.Conversation{}, false
		}
		return conv.Conversation{ID: id, Messages: []conv.Message{{Role: conv.RoleUser, Content: prompt}}}, true
	}
	if s.err == nil {
		s.err = s.sc.Err()
	}
	return conv.Conversation{}, false
}

func (s *tsvSource) Err() error   { return s.err }
func (s *tsvSource) Close() error { return nil }

// TestOneFileFormat: the test-only format is listed, detected from its
// head or its file name, and opened by name.
func TestOneFileFormat(t *testing.T) {
	t.Parallel()
	if !slices.Contains(Names(), "test-tsv") {
		t.Fatalf("formats %v lack test-tsv", Names())
	}
	input := "#tsv-sessions\na\tfirst prompt\nb\tsecond prompt\n"
	in, err := Open("-", "", strings.NewReader(input), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, in)
	in.Close()
	if in.Format.Name != "test-tsv" || len(got) != 2 || got[1].ID != "b" || got[1].Messages[0].Content != "second prompt" {
		t.Errorf("detected %q, read %+v", in.Format.Name, got)
	}
	path := t.TempDir() + "/x.tsvsessions"
	if err := os.WriteFile(path, []byte("c\tthird\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"", "test-tsv"} {
		in, err := Open(path, format, nil, Options{})
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		if got := readAll(t, in); in.Format.Name != "test-tsv" || len(got) != 1 || got[0].ID != "c" {
			t.Errorf("format %q: detected %q, read %+v", format, in.Format.Name, got)
		}
		in.Close()
	}
}

// FuzzDetect: detection never panics; a format it returns accepts the
// head and is the only one that does; every failure is a bad input that
// names the input.
func FuzzDetect(f *testing.F) {
	traces, _ := filepath.Glob("testdata/traces/*_*.*")
	for _, path := range append([]string{"testdata/conversations.jsonl", "testdata/vllm.json", "testdata/openai.jsonl", "testdata/generate.json", sharegptFile}, traces...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"id":"a","messages":[{"content":"\ud800"}]}`))
	f.Add([]byte("#tsv-sessions\nx\ty\n"))
	f.Add([]byte(`{"a":{"b":[1,{"c":"d"}]},"filetype":"generate_conversations"}`))
	f.Fuzz(func(t *testing.T, head []byte) {
		h := SniffJSON(head)
		if h.Keys != nil && !h.Object {
			t.Fatalf("keys %v without an object", h.Keys)
		}
		fm, err := Detect("fuzz.in", head)
		if err != nil {
			if !IsBadInput(err) || !strings.HasPrefix(err.Error(), "fuzz.in") {
				t.Fatalf("error %v: not a bad input naming the input", err)
			}
			return
		}
		n := 0
		for _, other := range Formats() {
			if other.Detect != nil && other.Detect("fuzz.in", head) {
				n++
			}
		}
		if !fm.Detect("fuzz.in", head) || n != 1 {
			t.Fatalf("detected %q, which accepts the head: %v; %d formats do", fm.Name, fm.Detect("fuzz.in", head), n)
		}
	})
}
