package gen

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/dist"
)

// Filetype is the value of the "filetype" field of vLLM's generator config.
const Filetype = "generate_conversations"

// Config is a workload: the fields of vLLM's generate_conversations JSON
// config plus mtkit's extensions. Turn counts count messages (a user
// message and its answer are two turns), as in vLLM.
type Config struct {
	// NumConversations is the number of conversations to write.
	NumConversations int
	// TextFiles are the corpus files (resolved paths); empty means the
	// embedded public-domain corpus.
	TextFiles []string
	// PrintStats prints the describe table to stderr at the end.
	PrintStats bool
	// NumTurns is the number of messages per conversation, rounded up to
	// an even number and at least 2.
	NumTurns dist.Dist
	// CommonPrefixTokens is the size of the prefix shared by all
	// conversations (sampled once, or once per prefix group).
	CommonPrefixTokens dist.Dist
	// PrefixTokens is the size of each conversation's own prefix.
	PrefixTokens dist.Dist
	// InputTokens is the size of each user message (the first one
	// includes the prefixes, see docs/mtgen.md).
	InputTokens dist.Dist
	// OutputTokens is the target length of each assistant answer.
	OutputTokens dist.Dist
	// ThinkTime, in seconds, is the pause before each user message but the
	// first; nil means none (mtkit extension "think_time").
	ThinkTime *dist.Dist
	// PrefixGroups > 0 puts conversation i in group i mod PrefixGroups,
	// whose shared prefix is a system message (mtkit extension
	// "prefix_groups"); 0 puts the common prefix at the start of each first
	// user message, as vLLM does.
	PrefixGroups int
	// Seed seeds every random choice (mtkit extension "seed").
	Seed uint64
}

// DefaultConfig returns the workload used when no config file is given:
// vLLM's example generate_multi_turn.json without its prefixes, and 100
// conversations.
func DefaultConfig() *Config {
	must := func(s string) dist.Dist {
		d, err := dist.Parse(s, dist.Count)
		if err != nil {
			panic(err) // constant specs, covered by tests
		}
		return d
	}
	return &Config{
		NumConversations:   100,
		NumTurns:           must("uniform:12:18"),
		CommonPrefixTokens: must("constant:0"),
		PrefixTokens:       must("constant:0"),
		InputTokens:        must("uniform:120:160"),
		OutputTokens:       must("uniform:80:120"),
	}
}

// LoadConfig reads a generate_conversations JSON config. Relative
// text_files are resolved against the config file's directory.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data, path)
}

// maxConversations bounds num_conversations (and -n).
const maxConversations = 1 << 40

// ParseConfig parses a generate_conversations config read from the file
// name (used in errors and to resolve text_files). Unknown fields are
// errors; every error reads "name:line: field.path: problem".
func ParseConfig(data []byte, name string) (*Config, error) {
	root, err := parseJSONTree(data)
	if err != nil {
		var je *jsonError
		if errors.As(err, &je) {
			return nil, fmt.Errorf("%s:%d: %s", name, lineOf(data, je.off), je.msg)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cp := &configParser{data: data, name: name}
	cfg := DefaultConfig()
	cfg.NumConversations = 0
	if err := cp.top(root, cfg, filepath.Dir(name)); err != nil {
		return nil, err
	}
	return cfg, nil
}

type configParser struct {
	data []byte
	name string
}

func (cp *configParser) errf(off int64, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return fmt.Errorf("%s:%d: %s", cp.name, lineOf(cp.data, off), msg)
}

// object checks that n is an object whose keys are all in allowed, and
// calls fn for each member in file order.
func (cp *configParser) object(n *jnode, path string, allowed []string, fn func(key string, koff int64, v *jnode) error) error {
	if n.kind != 'o' {
		return cp.errf(n.off, path, "must be an object, not %s", n.kindName())
	}
	for i, k := range n.keys {
		kp := join(path, k)
		if !slices.Contains(allowed, k) {
			return cp.errf(n.koffs[i], kp, "unknown field")
		}
		if err := fn(k, n.koffs[i], n.vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (cp *configParser) top(root *jnode, cfg *Config, dir string) error {
	seen := map[string]bool{}
	err := cp.object(root, "", []string{
		"filetype", "num_conversations", "text_files", "print_stats", "prompt_input", "prompt_output",
		"seed", "prefix_groups", "think_time",
	}, func(k string, koff int64, v *jnode) error {
		seen[k] = true
		switch k {
		case "filetype":
			if v.kind != 's' || v.str != Filetype {
				return cp.errf(v.off, k, "must be %q", Filetype)
			}
		case "num_conversations":
			n, err := cp.integer(v, k, 1, maxConversations)
			if err != nil {
				return err
			}
			cfg.NumConversations = int(n)
		case "text_files":
			if v.kind != 'a' {
				return cp.errf(v.off, k, "must be an array of file names, not %s", v.kindName())
			}
			for i, e := range v.elems {
				if e.kind != 's' || e.str == "" {
					return cp.errf(e.off, fmt.Sprintf("%s[%d]", k, i), "must be a non-empty file name")
				}
				p := e.str
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				cfg.TextFiles = append(cfg.TextFiles, p)
			}
		case "print_stats":
			if v.kind != 'b' {
				return cp.errf(v.off, k, "must be true or false")
			}
			cfg.PrintStats = v.b
		case "prompt_input":
			return cp.promptInput(v, cfg)
		case "prompt_output":
			return cp.object(v, k, []string{"num_tokens"}, func(k2 string, _ int64, v2 *jnode) error {
				d, err := cp.dist(v2, join(k, k2), dist.Count)
				cfg.OutputTokens = d
				return err
			})
		case "seed":
			n, err := cp.integer(v, k, 0, math.MaxInt64)
			cfg.Seed = uint64(n)
			return err
		case "prefix_groups":
			n, err := cp.integer(v, k, 0, maxConversations)
			cfg.PrefixGroups = int(n)
			return err
		case "think_time":
			d, err := cp.dist(v, k, dist.Seconds)
			cfg.ThinkTime = &d
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range []string{"num_conversations", "prompt_input", "prompt_output"} {
		if !seen[k] {
			return cp.errf(root.off, k, "missing")
		}
	}
	return nil
}

func (cp *configParser) promptInput(v *jnode, cfg *Config) error {
	const path = "prompt_input"
	seen := map[string]bool{}
	err := cp.object(v, path, []string{"num_turns", "common_prefix_num_tokens", "prefix_num_tokens", "num_tokens"},
		func(k string, _ int64, v2 *jnode) error {
			seen[k] = true
			d, err := cp.dist(v2, join(path, k), dist.Count)
			switch k {
			case "num_turns":
				cfg.NumTurns = d
			case "common_prefix_num_tokens":
				cfg.CommonPrefixTokens = d
			case "prefix_num_tokens":
				cfg.PrefixTokens = d
			case "num_tokens":
				cfg.InputTokens = d
			}
			return err
		})
	if err != nil {
		return err
	}
	for _, k := range []string{"num_turns", "num_tokens"} {
		if !seen[k] {
			return cp.errf(v.off, join(path, k), "missing")
		}
	}
	return nil
}

// integer reads a whole number in [lo, hi].
func (cp *configParser) integer(v *jnode, path string, lo, hi int64) (int64, error) {
	if v.kind != 'n' {
		return 0, cp.errf(v.off, path, "must be an integer, not %s", v.kindName())
	}
	n, err := strconv.ParseInt(v.str, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v.str, 64)
		if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f > math.MaxInt64 {
			return 0, cp.errf(v.off, path, "must be an integer, not %s", v.str)
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		return 0, cp.errf(v.off, path, "%d is out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

// dist reads a distribution object such as {"distribution": "uniform",
// "min": 12, "max": 18}.
func (cp *configParser) dist(v *jnode, path string, unit dist.Unit) (dist.Dist, error) {
	if v.kind != 'o' {
		return dist.Dist{}, cp.errf(v.off, path, "must be an object with a \"distribution\" field, not %s", v.kindName())
	}
	var (
		kind    dist.Kind
		kindOff int64 = -1
		params  []dist.Param
		offs    = map[string]int64{}
	)
	for i, k := range v.keys {
		val, koff := v.vals[i], v.koffs[i]
		if k == "distribution" {
			if val.kind != 's' {
				return dist.Dist{}, cp.errf(val.off, join(path, k), "must be a string")
			}
			kind, kindOff = dist.Kind(strings.ToLower(val.str)), val.off
			continue
		}
		offs[k] = koff
		var p dist.Param
		switch {
		case val.kind == 'z':
			p.Null = true
		case val.kind == 'n':
			f, err := strconv.ParseFloat(val.str, 64)
			if err != nil {
				return dist.Dist{}, cp.errf(val.off, join(path, k), "%s is not a finite number", val.str)
			}
			p.Val, p.IsInt = f, unit == dist.Count && !strings.ContainsAny(val.str, ".eE")
		case val.kind == 's' && unit == dist.Seconds:
			q, err := dist.ParseValue(val.str, unit)
			if err != nil {
				return dist.Dist{}, cp.errf(val.off, join(path, k), "%v", err)
			}
			p = q
		default:
			return dist.Dist{}, cp.errf(val.off, join(path, k), "must be a number, not %s", val.kindName())
		}
		p.Key = k
		params = append(params, p)
	}
	if kindOff < 0 {
		return dist.Dist{}, cp.errf(v.off, join(path, "distribution"), "missing")
	}
	d, err := dist.Build(kind, params)
	if err != nil {
		var pe *dist.ParamError
		if errors.As(err, &pe) {
			if pe.Key == "" {
				return dist.Dist{}, cp.errf(kindOff, path, "%s", pe.Msg)
			}
			off, ok := offs[pe.Key]
			if !ok {
				off = v.off
			}
			return dist.Dist{}, cp.errf(off, join(path, pe.Key), "%s", pe.Msg)
		}
		return dist.Dist{}, cp.errf(v.off, path, "%v", err)
	}
	return d, nil
}
