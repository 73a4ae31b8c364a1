package tokenize

import "errors"

// ParseJSON parses a Hugging Face tokenizer.json document; name is used in
// errors and returned by Name.
func ParseJSON(data []byte, name string) (Tokenizer, error) {
	return nil, errors.New("tokenizer " + name + ": tokenizer.json support is not built yet")
}
