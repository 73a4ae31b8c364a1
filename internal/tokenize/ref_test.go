package tokenize

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// fixtureModels are the tokenizer.json fixtures scripts/fixtures.sh fetches.
var fixtureModels = []string{"qwen3", "llama3"}

// builtinModels are the built-in encodings checked against js-tiktoken.
var builtinModels = []string{"o200k_base", "cl100k_base"}

// fixturePath returns the tokenizer.json of model, skipping the test when
// it is missing (failing when MTKIT_REQUIRE_FIXTURES=1).
func fixturePath(t testing.TB, model string) string {
	t.Helper()
	p := filepath.Join(clitest.FixturesDir(), model, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		missing(t, "fixture "+p+" missing")
	}
	return p
}

// missing skips (or, with MTKIT_REQUIRE_FIXTURES=1, fails) for an absent
// fixture.
func missing(t testing.TB, what string) {
	t.Helper()
	msg := what + ": run scripts/fixtures.sh (or set MTKIT_FIXTURES)"
	if os.Getenv("MTKIT_REQUIRE_FIXTURES") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// specFor returns the Load spec of a fixture or built-in model.
func specFor(t testing.TB, model string) string {
	t.Helper()
	for _, b := range builtinModels {
		if b == model {
			return model
		}
	}
	return fixturePath(t, model)
}

// refScript is the node reference script.
func refScript(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "tokref", "tokref.mjs")
}

// refIDs runs the node reference on texts and returns its ids; it skips
// when node or the reference engines are missing.
func refIDs(t testing.TB, model string, texts []string) [][]int {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node not found")
	}
	if _, err := os.Stat(filepath.Join(clitest.FixturesDir(), "node_modules", "@huggingface", "tokenizers")); err != nil {
		missing(t, "reference engine @huggingface/tokenizers missing")
	}
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, refScript(t), specFor(t, model))
	cmd.Env = append(os.Environ(), "MTKIT_FIXTURES="+clitest.FixturesDir())
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tokref %s: %v\n%s", model, err, stderr.String())
	}
	var ids [][]int
	if err := json.Unmarshal(out, &ids); err != nil {
		t.Fatalf("tokref %s: %v", model, err)
	}
	if len(ids) != len(texts) {
		t.Fatalf("tokref %s: %d results for %d strings", model, len(ids), len(texts))
	}
	return ids
}
