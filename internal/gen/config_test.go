package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVLLMExampleConfig reads vLLM's own benchmarks/multi_turn/
// generate_multi_turn.json (unchanged, its text file replaced by a public
// domain stand-in of the same name) and checks the generated workload.
func TestVLLMExampleConfig(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(filepath.Join("testdata", "generate_multi_turn.json"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NumConversations != 24 || cfg.PrintStats || cfg.NumTurns.String() != "uniform:12:18" ||
		cfg.CommonPrefixTokens.String() != "constant:500" ||
		cfg.PrefixTokens.String() != "lognormal:average=1000.0,median_ratio=0.85,max=5000.0" ||
		cfg.InputTokens.String() != "uniform:120:160" || cfg.OutputTokens.String() != "uniform:80:120" {
		t.Fatalf("config = %+v", cfg)
	}
	if want := filepath.Join("testdata", "pg1184.txt"); len(cfg.TextFiles) != 1 || cfg.TextFiles[0] != want {
		t.Fatalf("text_files = %q, want [%q] (relative to the config)", cfg.TextFiles, want)
	}
	tok := loadTok(t, "o200k_base")
	convs := generate(t, cfg, tok, 2)
	checkExact(t, convs, tok)
	var common string
	for i, c := range convs {
		n := len(c.Messages)
		if n < 12 || n > 18 || n%2 != 0 {
			t.Errorf("%s: %d messages, want 12..18, even", c.ID, n)
		}
		first := c.Messages[0]
		pre := c.Meta["prefix_tokens"].(int)
		if first.Tokens != max(c.Messages[0].Tokens, 500+pre) || first.Tokens < 500+pre {
			t.Errorf("%s: first message %d tokens, prefixes %d", c.ID, first.Tokens, 500+pre)
		}
		if i == 0 {
			common = first.Content
		} else {
			common = common[:commonLen(common, first.Content)]
		}
		for k, m := range c.Messages[1:] {
			if m.Role == "user" && (m.Tokens < 120 || m.Tokens > 160) {
				t.Errorf("%s messages[%d]: %d tokens, want 120..160", c.ID, k+1, m.Tokens)
			}
			if m.Role == "assistant" && (m.OutputTokens < 80 || m.OutputTokens > 120) {
				t.Errorf("%s messages[%d]: output_tokens %d, want 80..120", c.ID, k+1, m.OutputTokens)
			}
		}
	}
	if n := tok.Count(common); n < 495 || n > 505 {
		t.Errorf("shared start of the first messages is %d tokens, want the 500-token common prefix", n)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	const good = `{
  "filetype": "generate_conversations",
  "num_conversations": 3,
  "prompt_input": {
    "num_turns": {"distribution": "constant", "value": 2},
    "num_tokens": {"distribution": "uniform", "min": 1, "max": 4}
  },
  "prompt_output": {"num_tokens": {"distribution": "constant", "value": 1}}
}`
	tests := []struct {
		name, old, new, want string
	}{
		{"unknown top", `"num_conversations": 3`, `"num_conversations": 3, "extra": 1`, "c.json:3: extra: unknown field"},
		{"unknown dist field", `"max": 4}`, `"maxx": 4}`, "c.json:6: prompt_input.num_tokens.maxx: unknown field (uniform takes min, max)"},
		{"missing max", `, "max": 4}`, `}`, "c.json:6: prompt_input.num_tokens.max: missing"},
		{"bad filetype", `"generate_conversations"`, `"sharegpt"`, `c.json:2: filetype: must be "generate_conversations"`},
		{"zero conversations", `"num_conversations": 3`, `"num_conversations": 0`, "c.json:3: num_conversations: 0 is out of range"},
		{"fractional conversations", `"num_conversations": 3`, `"num_conversations": 2.5`, "num_conversations: must be an integer, not 2.5"},
		{"missing num_turns", `"num_turns": {"distribution": "constant", "value": 2},`, ``, "c.json:4: prompt_input.num_turns: missing"},
		{"missing prompt_output", `,
  "prompt_output": {"num_tokens": {"distribution": "constant", "value": 1}}`, ``, "c.json:1: prompt_output: missing"},
		{"unknown distribution", `"uniform"`, `"normal"`, `c.json:6: prompt_input.num_tokens: unknown distribution "normal"`},
		{"no distribution", `"distribution": "constant", "value": 2`, `"value": 2`, "c.json:5: prompt_input.num_turns.distribution: missing"},
		{"string value", `"value": 2`, `"value": "2"`, "c.json:5: prompt_input.num_turns.value: must be a number, not a string"},
		{"print_stats type", `"num_conversations": 3`, `"num_conversations": 3, "print_stats": "yes"`, "print_stats: must be true or false"},
		{"text_files type", `"num_conversations": 3`, `"num_conversations": 3, "text_files": "a.txt"`, "text_files: must be an array"},
		{"duplicate", `"num_conversations": 3`, `"num_conversations": 3, "num_conversations": 4`, "c.json:3: num_conversations: given twice"},
		{"syntax", `"num_conversations": 3,`, `"num_conversations": 3,,`, "c.json:3: invalid JSON"},
		{"trailing", `}}
}`, `}}
} {}`, "unexpected data after the top-level value"},
		{"not object", `"prompt_output": {"num_tokens": {"distribution": "constant", "value": 1}}`, `"prompt_output": [1]`, "c.json:8: prompt_output: must be an object, not an array"},
		{"think_time", `"num_conversations": 3`, `"num_conversations": 3, "think_time": {"distribution": "exponential", "mean": "2x"}`, "think_time.mean: \"2x\" is not a number or a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(good, tt.old, tt.new, 1)
			if src == good {
				t.Fatalf("test edit %q not found", tt.old)
			}
			_, err := ParseConfig([]byte(src), "c.json")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := ParseConfig([]byte(good), "c.json"); err != nil {
		t.Errorf("good config: %v", err)
	}
}

func TestConfigExtensions(t *testing.T) {
	t.Parallel()
	src := `{"num_conversations": 2, "seed": 9, "prefix_groups": 2,
  "think_time": {"distribution": "uniform", "min": "500ms", "max": 2},
  "text_files": ["a.txt", "/abs/b.txt"],
  "prompt_input": {"num_turns": {"distribution": "zipf", "alpha": 2, "max": null},
    "num_tokens": {"distribution": "poisson", "alpha": 50, "max": 0}},
  "prompt_output": {"num_tokens": {"distribution": "lognormal", "mean": 3, "sigma": 0.5}}}`
	cfg, err := ParseConfig([]byte(src), filepath.Join("dir", "c.json"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Seed != 9 || cfg.PrefixGroups != 2 || cfg.ThinkTime == nil || cfg.ThinkTime.String() != "uniform:0.5:2.0" ||
		cfg.NumTurns.String() != "zipf:alpha=2.0" || cfg.InputTokens.String() != "poisson:alpha=50.0" ||
		cfg.TextFiles[0] != filepath.Join("dir", "a.txt") || cfg.TextFiles[1] != "/abs/b.txt" {
		t.Errorf("config = %+v, think %v", cfg, cfg.ThinkTime)
	}
}

func TestLoadConfigMissing(t *testing.T) {
	t.Parallel()
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "none.json")); !os.IsNotExist(err) {
		t.Errorf("error %v, want not-exist", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "generate_multi_turn.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"num_conversations": 1, "prompt_input": {"num_turns": {"distribution": "constant", "value": 2}, "num_tokens": {"distribution": "constant", "value": 2}}, "prompt_output": {"num_tokens": {"distribution": "constant", "value": 2}}}`))
	f.Add([]byte(`[1, {"a": null}, "x", true]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, "f.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json:") {
				t.Fatalf("error without file:line: %v", err)
			}
			return
		}
		if cfg.NumConversations < 1 || cfg.NumTurns.Kind == "" || cfg.InputTokens.Kind == "" || cfg.OutputTokens.Kind == "" {
			t.Fatalf("accepted incomplete config %+v", cfg)
		}
	})
}
