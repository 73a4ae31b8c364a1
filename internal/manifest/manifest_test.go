package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/replay"
)

func TestRedactArgs(t *testing.T) {
	t.Parallel()
	redact := map[string]func(string) string{"api-key": Hide, "header": Hide, "shout": strings.ToUpper}
	for _, tc := range []struct{ in, want string }{
		{"mtrun --api-key sk-1 --url u", "mtrun --api-key REDACTED --url u"},
		{"mtrun --api-key=sk-1 --header=Authorization:x", "mtrun --api-key=REDACTED --header=REDACTED"},
		{"mtrun -api-key sk-1 -header X-Key:y f.jsonl", "mtrun -api-key REDACTED -header REDACTED f.jsonl"},
		{"mtrun -api-key=sk-1", "mtrun -api-key=REDACTED"},
		{"mtrun --clients 4", "mtrun --clients 4"},
		{"mtrun --api-keys x", "mtrun --api-keys x"},                 // another flag
		{"mtrun -- --api-key", "mtrun -- --api-key"},                 // a file name after --
		{"mtrun --api-key", "mtrun --api-key"},                       // no value: cli's error
		{"mtrun --shout u -shout=v f", "mtrun --shout U -shout=V f"}, // a function of the value
	} {
		got := strings.Join(RedactArgs(strings.Fields(tc.in), redact), " ")
		if got != tc.want {
			t.Errorf("RedactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ explicit, records, want string }{
		{"", "-", ""},
		{"", "", ""},
		{"m.json", "-", "m.json"},
		{"", "run.jsonl", "run.manifest.json"},
		{"", "run.jsonl.zst", "run.manifest.json"},
		{"", "out/run.parquet", "out/run.manifest.json"},
		{"-", "run.jsonl", "-"},
	} {
		if got := Path(tc.explicit, tc.records); got != tc.want {
			t.Errorf("Path(%q, %q) = %q, want %q", tc.explicit, tc.records, got, tc.want)
		}
	}
}

// TestWrite writes a manifest before and after a run and reads it back:
// the settings, header names without values, the redactor applied, the
// summary and end time added by Finish.
func TestWrite(t *testing.T) {
	t.Parallel()
	r := &replay.Options{RunID: "r1", URL: "http://h:1", Clients: 4, Headers: http.Header{"X-B": {"secret"}, "X-A": {"s2"}}}
	started := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m := New(r, started, "v1", map[string]any{"sim_config": "preset=zero"})
	path := filepath.Join(t.TempDir(), "m.json")
	redact := func(b []byte) ([]byte, error) {
		return bytes.ReplaceAll(b, []byte("http://h:1"), []byte("http://REDACTED")), nil
	}
	if err := m.Write(path, nil, redact); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("secret")) {
			t.Errorf("a header value was written: %s", b)
		}
		got = nil
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
	}
	read()
	s := got["settings"].(map[string]any)
	if s["clients"] != 4.0 || s["sim_config"] != "preset=zero" || got["url"] != "http://REDACTED" || got["ended"] != nil {
		t.Errorf("before the run: %v", got)
	}
	if h := s["headers"].([]any); len(h) != 2 || h[0] != "X-A" || h[1] != "X-B" {
		t.Errorf("headers %v, want [X-A X-B]", h)
	}
	m.Finish(&replay.Summary{RunID: "r1", Model: "m", Elapsed: time.Minute, Requests: 9})
	if err := m.Write(path, nil, redact); err != nil {
		t.Fatal(err)
	}
	read()
	if got["ended"] != "2026-11-23T12:01:00Z" || got["model"] != "m" || got["summary"] == nil {
		t.Errorf("after the run: ended %v, model %v, summary %v", got["ended"], got["model"], got["summary"])
	}
	var out bytes.Buffer
	if err := m.Write("-", &out, redact); err != nil || !bytes.Contains(out.Bytes(), []byte(`"run_id": "r1"`)) {
		t.Errorf("to stdout: %v, %q", err, out.String())
	}
	if err := m.Write(path, nil, func([]byte) ([]byte, error) { return nil, errors.New("boom") }); err == nil {
		t.Error("a redactor error was not returned")
	}
}

// TestWriteFileAtomic: a failed write leaves the earlier file whole and no
// temporary file behind.
func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := WriteFileAtomic(path, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "m.json"), []byte("x")); err == nil {
		t.Error("no error for a missing directory")
	}
	if err := WriteFileAtomic(path, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two\n" {
		t.Errorf("content %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1", len(ents))
	}
}
