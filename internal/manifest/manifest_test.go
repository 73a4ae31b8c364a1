package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestRead reads back what Write wrote, and says a missing file and bad
// JSON.
func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.manifest.json")
	want := &Manifest{RunID: "r1", Host: "h", Settings: map[string]any{"segment": "1/3"}}
	if err := want.Write(path, nil, func(b []byte) ([]byte, error) { return b, nil }); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || got.RunID != "r1" || got.Host != "h" || got.Settings["segment"] != "1/3" {
		t.Errorf("Read = %+v, %v", got, err)
	}
	if _, err := Read(filepath.Join(dir, "none.json")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want not-exist", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"run_id": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bad); err == nil {
		t.Error("a run_id that is a number was accepted")
	}
}
