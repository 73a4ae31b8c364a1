package convert

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/iox"
)

// memOpener serves named in-memory inputs; other names are opened as
// files through iox (so compressed test files are decompressed).
func memOpener(files map[string]string) Opener {
	return func(name string) (io.ReadCloser, string, error) {
		if s, ok := files[name]; ok {
			return io.NopCloser(strings.NewReader(s)), name, nil
		}
		in, err := iox.Open(name, strings.NewReader(""))
		if err != nil {
			return nil, name, err
		}
		return in, in.Name, nil
	}
}

// convertFiles runs a conversion of files (name → content, read in name
// order given by opts.Inputs, default ["in.jsonl"]) and decodes the output.
func convertFiles(t *testing.T, opts Options, files map[string]string) ([]conv.Conversation, *Summary, string, error) {
	t.Helper()
	if opts.Inputs == nil {
		opts.Inputs = []string{"in.jsonl"}
	}
	opts.Open = memOpener(files)
	var log, out bytes.Buffer
	opts.Log = &log
	sum, err := Run(context.Background(), opts, conv.NewWriter(&out))
	var convs []conv.Conversation
	// Without Dedupe the output may repeat an id, which conv.Reader
	// refuses within one input: then each line is read on its own.
	inputs := []string{out.String()}
	if !opts.Dedupe {
		inputs = strings.SplitAfter(out.String(), "\n")
	}
	for _, in := range inputs {
		r := conv.NewReader(strings.NewReader(in), "out")
		for r.Scan() {
			convs = append(convs, r.Conversation())
		}
		if rerr := r.Err(); rerr != nil {
			t.Fatalf("output is not valid conversation JSONL: %v\n%s", rerr, out.String())
		}
	}
	if sum != nil && err == nil && sum.Conversations != sum.Written+sum.DroppedTotal() {
		t.Errorf("summary does not add up: %d conversations, %d written, %d dropped", sum.Conversations, sum.Written, sum.DroppedTotal())
	}
	return convs, sum, log.String(), err
}

func convertString(t *testing.T, opts Options, in string) ([]conv.Conversation, *Summary, string, error) {
	t.Helper()
	return convertFiles(t, opts, map[string]string{"in.jsonl": in})
}

// shape renders a conversation compactly: "id: u:text a:text".
func shape(c conv.Conversation) string {
	var b strings.Builder
	b.WriteString(c.ID + ":")
	for _, m := range c.Messages {
		fmt.Fprintf(&b, " %c:%s", m.Role[0], m.Content)
	}
	return b.String()
}

func shapes(cs []conv.Conversation) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, shape(c))
	}
	return out
}

// checkConvert converts in and compares the conversations written (as
// shapes) and the drops (nil: none) with the expected ones.
func checkConvert(t *testing.T, opts Options, in string, want []string, dropped map[Reason]int) *Summary {
	t.Helper()
	convs, sum, log, err := convertString(t, opts, in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, shapes(convs)); diff != "" {
		t.Errorf("conversations (-want +got):\n%s\nlog: %s", diff, log)
	}
	if dropped == nil {
		dropped = map[Reason]int{}
	}
	if diff := cmp.Diff(dropped, sum.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	return sum
}
