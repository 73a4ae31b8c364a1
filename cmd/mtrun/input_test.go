package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/source"
)

const sharegptFile = "../../internal/convert/testdata/real/fastchat_dummy_conversation.json"

// userTurns counts the requests a replay of path (in its detected format)
// sends: one per user message.
func userTurns(t *testing.T, path string) (ids map[string]bool, turns int) {
	t.Helper()
	in, err := source.Open(path, "", nil, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ids = map[string]bool{}
	for c, ok := in.Next(); ok; c, ok = in.Next() {
		ids[c.ID] = true
		for _, m := range c.Messages {
			if m.Role == conv.RoleUser {
				turns++
			}
		}
	}
	return ids, turns
}

// manifestDigest reads input_sha256 from a manifest file.
func manifestDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Digest string `json:"input_sha256"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Digest
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestInputFormats replays a ShareGPT file (converted on the fly), a
// generate_conversations config (generated in-process) and conversation
// JSONL against the simulator: every conversation is replayed, turn by
// turn, and the manifest holds the input's SHA-256 even when the run
// stops before the end of the input.
func TestInputFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	convs := filepath.Join(dir, "convs.jsonl")
	// Larger than every read buffer: the digest must read the rest.
	if err := os.WriteFile(convs, []byte(convJSONL(30000, 1, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		extra      []string
		requests   int // 0: every user turn of the input
	}{
		{"sharegpt", sharegptFile, nil, 0},
		{"sharegpt stdin", "-", nil, 0},
		{"generate", "../../internal/source/testdata/generate.json", nil, 0},
		{"stopped early", convs, []string{"--max-requests", "3"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, stdin := tc.path, ""
			if tc.path == "-" {
				file = sharegptFile
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				stdin = string(b)
			}
			ids, turns := userTurns(t, file)
			if tc.requests == 0 {
				tc.requests = turns
			}
			out := t.TempDir()
			args := append([]string{"--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--quiet",
				"--records", filepath.Join(out, "recs.jsonl")}, tc.extra...)
			got := runMtrun(t, stdin, nil, append(args, tc.path)...)
			if got.code != 0 {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			recs := readFiles(t, filepath.Join(out, "recs.jsonl"))
			if len(recs) != tc.requests {
				t.Errorf("%d records, want %d", len(recs), tc.requests)
			}
			for _, r := range recs {
				if !r.OK() || !ids[r.ConversationID] {
					t.Errorf("record %+v", r)
				}
			}
			if d := manifestDigest(t, filepath.Join(out, "recs.manifest.json")); d != fileDigest(t, file) {
				t.Errorf("manifest input_sha256 %q, want the input file's", d)
			}
		})
	}
}

// TestInputFormatFlag: --input-format reads a file as the named format
// where detection picks another, and an unknown name is a usage error
// that lists the formats.
func TestInputFormatFlag(t *testing.T) {
	t.Parallel()
	got := runMtrun(t, "", nil, "--url", "http://127.0.0.1:1", "--input-format", "csv")
	if want := `mtrun: --input-format: unknown input format "csv": want one of ` + strings.Join(source.Names(), ", ") + "\n"; got.code != 2 || got.stderr != want || got.stdout != "" {
		t.Errorf("unknown format: exit %d, stdout %q, stderr %q; want 2 and %q", got.code, got.stdout, got.stderr, want)
	}
	// OpenAI content parts are not conversation JSONL, but the converter
	// reads them.
	input := `{"id":"p1","messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":"a"}]}` + "\n"
	got = runMtrun(t, input, nil, "--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--quiet")
	if got.code != 2 || !strings.Contains(got.stderr, "stdin:1: messages.content") {
		t.Errorf("detected as conversations: exit %d, stderr %q", got.code, got.stderr)
	}
	got = runMtrun(t, input, nil, "--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--quiet", "--input-format", "openai")
	if got.code != 0 {
		t.Fatalf("--input-format openai: exit %d: %s", got.code, got.stderr)
	}
	if recs := readRecords(t, got.stdoutBytes, "stdout"); len(recs) != 1 || recs[0].ConversationID != "p1" || !recs[0].OK() {
		t.Errorf("records %+v", recs)
	}
}

// TestBadLineMidRun: a bad record found during the run ends it with the
// located error and exit 2, after the records of the conversations before
// it.
func TestBadLineMidRun(t *testing.T) {
	t.Parallel()
	input := convJSONL(2, 1, 2) + `{"id":"bad","messages":[{"role":"user","content":"x","tokens":-1}]}` + "\n" + convJSONL(1, 1, 2)
	got := runMtrun(t, input, nil, "--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--quiet")
	if got.code != 2 || !strings.Contains(got.stderr, "mtrun: stdin:3: messages[0].tokens: -1 is negative") {
		t.Errorf("exit %d, stderr %q", got.code, got.stderr)
	}
	if recs := readRecords(t, got.stdoutBytes, "stdout"); len(recs) != 2 {
		t.Errorf("%d records, want the 2 before the bad line", len(recs))
	}
}

// A test-only timed format: one session per line after "#test-timed".
func init() {
	source.Register(source.Format{
		Name:   "test-timed",
		Doc:    "test only",
		Timed:  true,
		Detect: func(_ string, head []byte) bool { return strings.HasPrefix(string(head), "#test-timed\n") },
		Open: func(r io.Reader, _ string, _ source.Options) (source.Source, error) {
			b, err := io.ReadAll(r)
			var convs []conv.Conversation
			for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
				ts := float64(i)
				convs = append(convs, conv.Conversation{ID: line, Messages: []conv.Message{{Role: conv.RoleUser, Content: line, TimestampMs: &ts}}})
			}
			return source.Slice(convs), err
		},
	})
}
