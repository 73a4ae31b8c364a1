package mtrun

import (
	"io"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/command"
)

// TestTimedInput: the options say whether the input's format carries
// trace timestamps.
func TestTimedInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input string
		timed bool
	}{
		{`{"timestamp": 0, "input_length": 20, "output_length": 3, "hash_ids": [1]}` + "\n", true}, // Mooncake
		{`{"id":"a","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","output_tokens":1}]}` + "\n", false},
		{`{"id":"a","messages":[{"role":"user","content":"q","timestamp_ms":5}]}` + "\n", true},
	} {
		o := &Options{input: "-", tokenizer: "none"}
		in, err := openInput(o, command.Streams{In: strings.NewReader(tc.input), Err: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		in.Close()
		if o.Timed != tc.timed {
			t.Errorf("%s: timed %v, want %v", in.Format.Name, o.Timed, tc.timed)
		}
	}
}
