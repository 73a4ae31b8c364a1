package convert

import (
	"strconv"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
)

// Source roles that need more than a mapping: roleTool marks tool and
// function results, kept as tool messages when they name the call they
// answer (OpenAI's tool_call_id) and otherwise dropped and counted;
// roleFunctionCall and roleObservation are LLaMA-Factory/Glaive's tool
// call and tool result turns (see tools.go).
const (
	roleTool         = "tool"
	roleFunctionCall = "function_call"
	roleObservation  = "observation"
)

// knownRoles lists the accepted role names for error messages.
const knownRoles = "human, user, gpt, chatgpt, bing, bard, assistant, model, system, developer, tool, function, ipython, function_call, observation"

// mapRole maps a ShareGPT "from" or an OpenAI "role" (case-insensitive)
// to a conversation role. ShareGPT dumps name the assistant after the
// product that answered (gpt, chatgpt, bing, bard).
func mapRole(from string) (string, bool) {
	switch strings.ToLower(from) {
	case "human", "user":
		return conv.RoleUser, true
	case "gpt", "chatgpt", "bing", "bard", "assistant", "model":
		return conv.RoleAssistant, true
	case "system", "developer":
		return conv.RoleSystem, true
	case "tool", "function", "ipython":
		return roleTool, true
	case "function_call":
		return roleFunctionCall, true
	case "observation":
		return roleObservation, true
	}
	return "", false
}

// splitPart splits a ShareGPT id into its base id and part number: only a
// trailing "_<digits>" is a part suffix ("a_b_3" is part 3 of "a_b";
// "a_b", "abc" and "abc_" have no part, part == -1). Ids are never split
// when the base would be empty.
func splitPart(id string) (base string, part int) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 || i == len(id)-1 {
		return id, -1
	}
	digits := id[i+1:]
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return id, -1
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || len(digits) > 9 {
		return id, -1
	}
	return id[:i], n
}
