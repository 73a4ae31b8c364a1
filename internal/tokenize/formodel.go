package tokenize

import (
	"fmt"
	"os"
	"strings"
)

// ForModel is the tokenizer that a setting naming a model (vLLM's
// --model, an inference-perf config's tokenizer) gives: the model
// directory when it holds a tokenizer Load reads, else current, with a
// warning (mtkit downloads nothing). A model that is no directory here is
// warned about when it has a path separator, or always when named is set
// (the setting names a tokenizer, not a served model).
func ForModel(setting, model, current string, named bool) (spec, warning string) {
	if _, err := os.Stat(model); err == nil {
		_, err := Load(model)
		if err == nil {
			return model, ""
		}
		return current, fmt.Sprintf("%s %s: %v; counting tokens with %s (set --tokenizer)", setting, model, err, current)
	}
	if named || strings.ContainsRune(model, os.PathSeparator) {
		return current, fmt.Sprintf("%s %s: no such directory here, so no tokenizer from it; counting tokens with %s (set --tokenizer)", setting, model, current)
	}
	return current, ""
}
