package gen

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/dist"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// collect is a Writer that keeps the conversations.
type collect struct{ convs []*conv.Conversation }

func (c *collect) Write(x *conv.Conversation) error {
	c.convs = append(c.convs, x)
	return nil
}

func loadTok(t testing.TB, spec string) tokenize.Tokenizer {
	t.Helper()
	tok, err := tokenize.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func mustDist(t testing.TB, spec string, unit dist.Unit) dist.Dist {
	t.Helper()
	d, err := dist.Parse(spec, unit)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// generate runs a generator over cfg and returns its conversations.
func generate(t testing.TB, cfg *Config, tok Tokenizer, workers int) []*conv.Conversation {
	t.Helper()
	return generateWith(t, newGenerator(t, cfg, tok), cfg.NumConversations, workers)
}

// newGenerator returns a generator over cfg, tokenizer named o200k_base.
func newGenerator(t testing.TB, cfg *Config, tok Tokenizer) *Generator {
	t.Helper()
	g, err := New(cfg, tok, "o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// generateWith runs g and returns its conversations, checking that it
// wrote want of them.
func generateWith(t testing.TB, g *Generator, want, workers int) []*conv.Conversation {
	t.Helper()
	var c collect
	n, err := g.Generate(context.Background(), &c, workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != want || len(c.convs) != n {
		t.Fatalf("wrote %d (%d), want %d", n, len(c.convs), want)
	}
	return c.convs
}

// checkExact re-tokenizes every user and system message of the JSONL
// round trip and compares with its tokens field.
func checkExact(t *testing.T, convs []*conv.Conversation, tok Tokenizer) {
	t.Helper()
	var buf bytes.Buffer
	w := conv.NewWriter(&buf)
	for _, c := range convs {
		if err := w.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	for i, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var c conv.Conversation
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for k, m := range c.Messages {
			switch m.Role {
			case conv.RoleUser, conv.RoleSystem:
				if got := len(tok.Encode(m.Content)); got != m.Tokens {
					t.Errorf("%s messages[%d] (%s): content has %d tokens, tokens field says %d", c.ID, k, m.Role, got, m.Tokens)
				}
			case conv.RoleAssistant:
				if m.OutputTokens < 1 || m.Content == "" {
					t.Errorf("%s messages[%d]: output_tokens %d, content %q", c.ID, k, m.OutputTokens, m.Content)
				}
			}
		}
	}
}

func TestTokenExactO200k(t *testing.T) {
	t.Parallel()
	tok := loadTok(t, "o200k_base")
	cfg := DefaultConfig()
	cfg.NumConversations = 40
	cfg.NumTurns = mustDist(t, "uniform:2:8", dist.Count)
	cfg.InputTokens = mustDist(t, "lognormal:average=300,median_ratio=0.6,max=2000", dist.Count)
	cfg.CommonPrefixTokens = mustDist(t, "constant:700", dist.Count)
	cfg.PrefixTokens = mustDist(t, "uniform:0:400", dist.Count)
	convs := generate(t, cfg, tok, 2)
	checkExact(t, convs, tok)
	// The common prefix is byte-identical at the start of every first
	// user message, and the first message is charged for it.
	var first []string
	for _, c := range convs {
		first = append(first, c.Messages[0].Content)
	}
	common := first[0]
	for _, f := range first[1:] {
		common = common[:commonLen(common, f)]
	}
	if n := tok.Count(common); n < 690 {
		t.Errorf("common prefix of first messages is %d tokens, want about 700", n)
	}
}

func commonLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestTokenExactQwen3 runs the exactness check with a real model
// tokenizer.json when the fixtures are installed (bash scripts/fixtures.sh).
func TestTokenExactQwen3(t *testing.T) {
	t.Parallel()
	path := filepath.Join(clitest.FixturesDir(), "qwen3", "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no Qwen3 tokenizer.json fixture (%v); run scripts/fixtures.sh", err)
	}
	tok, err := tokenize.Load(path)
	if err != nil {
		if strings.Contains(err.Error(), "not implemented") {
			t.Skipf("tokenizer.json support not available yet: %v", err)
		}
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.NumConversations = 12
	cfg.NumTurns = mustDist(t, "uniform:2:6", dist.Count)
	cfg.InputTokens = mustDist(t, "uniform:1:600", dist.Count)
	cfg.CommonPrefixTokens = mustDist(t, "constant:300", dist.Count)
	cfg.PrefixTokens = mustDist(t, "uniform:0:200", dist.Count)
	cfg.PrefixGroups = 3
	checkExact(t, generate(t, cfg, tok, 2), tok)
}
