package gen

import (
	"errors"
	"fmt"

	"github.com/mtkit/mtkit/internal/dist"
)

// ErrFlag is wrapped by the errors of Apply: a bad command-line value.
var ErrFlag = errors.New("bad flag value")

// flagErr returns an error that matches ErrFlag.
func flagErr(format string, args ...any) error {
	return &flagError{msg: fmt.Sprintf(format, args...)}
}

type flagError struct{ msg string }

func (e *flagError) Error() string        { return e.msg }
func (e *flagError) Is(target error) bool { return target == ErrFlag }

// Overrides are command-line settings that replace a config's. Zero values
// (and a nil Seed) leave the config's setting alone. Errors name the
// mtgen flag of the field.
type Overrides struct {
	NumConversations   int      // --num-conversations
	Turns              string   // --turns (messages per conversation)
	InputTokens        string   // --input-tokens
	OutputTokens       string   // --output-tokens
	SystemPrefixTokens string   // --system-prefix-tokens (common prefix)
	PrefixTokens       string   // --prefix-tokens (per conversation)
	ThinkTime          string   // --think-time
	TextFiles          []string // --text-files
	PrefixGroups       int      // --prefix-groups
	Seed               *uint64  // --seed
	Stats              bool     // --stats
}

// Apply replaces the settings of c that o sets.
func (c *Config) Apply(o Overrides) error {
	if o.NumConversations < 0 || o.NumConversations > maxConversations {
		return flagErr("--num-conversations: %d is out of range [1, %d]", o.NumConversations, int64(maxConversations))
	}
	if o.NumConversations > 0 {
		c.NumConversations = o.NumConversations
	}
	for _, f := range []struct {
		flag, spec string
		dst        *dist.Dist
	}{
		{"--turns", o.Turns, &c.NumTurns},
		{"--input-tokens", o.InputTokens, &c.InputTokens},
		{"--output-tokens", o.OutputTokens, &c.OutputTokens},
		{"--system-prefix-tokens", o.SystemPrefixTokens, &c.CommonPrefixTokens},
		{"--prefix-tokens", o.PrefixTokens, &c.PrefixTokens},
	} {
		if f.spec == "" {
			continue
		}
		d, err := dist.Parse(f.spec, dist.Count)
		if err != nil {
			return flagErr("%s: %v", f.flag, err)
		}
		*f.dst = d
	}
	if o.ThinkTime != "" {
		d, err := dist.Parse(o.ThinkTime, dist.Seconds)
		if err != nil {
			return flagErr("--think-time: %v", err)
		}
		c.ThinkTime = &d
	}
	if len(o.TextFiles) > 0 {
		c.TextFiles = append([]string(nil), o.TextFiles...)
	}
	if o.PrefixGroups < 0 || o.PrefixGroups > maxConversations {
		return flagErr("--prefix-groups: %d is out of range [0, %d]", o.PrefixGroups, int64(maxConversations))
	}
	if o.PrefixGroups > 0 {
		c.PrefixGroups = o.PrefixGroups
	}
	if o.Seed != nil {
		c.Seed = *o.Seed
	}
	if o.Stats {
		c.PrintStats = true
	}
	return nil
}
