//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// pipeline runs commands connected stdout to stdin, the first one reading
// stdin (may be nil), and returns the last one's stdout. It fails the test,
// with every stage's stderr, when a stage fails or the timeout passes.
func pipeline(t *testing.T, timeout time.Duration, stdin []byte, stages ...[]string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmds := make([]*exec.Cmd, len(stages))
	stderrs := make([]*bytes.Buffer, len(stages))
	var out bytes.Buffer
	var closeAfterStart []*os.File
	for i, args := range stages {
		c := exec.CommandContext(ctx, args[0], args[1:]...)
		c.WaitDelay = 5 * time.Second
		stderrs[i] = &bytes.Buffer{}
		c.Stderr = stderrs[i]
		if i == 0 && stdin != nil {
			c.Stdin = bytes.NewReader(stdin)
		}
		if i > 0 {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmds[i-1].Stdout = w
			c.Stdin = r
			closeAfterStart = append(closeAfterStart, r, w)
		}
		cmds[i] = c
	}
	cmds[len(cmds)-1].Stdout = &out
	start := time.Now()
	for i, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatalf("start %s: %v", stages[i][0], err)
		}
	}
	for _, f := range closeAfterStart {
		f.Close()
	}
	var errs []string
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", filepath.Base(stages[i][0]), err))
		}
	}
	report := func() string {
		var b strings.Builder
		for i := range stages {
			fmt.Fprintf(&b, "$ %s\n%s", shellQuote(stages[i]), stderrs[i])
		}
		return b.String()
	}
	if ctx.Err() != nil {
		t.Fatalf("pipeline timed out after %v:\n%s", timeout, report())
	}
	if len(errs) > 0 {
		t.Fatalf("pipeline failed: %s\n%s", strings.Join(errs, "; "), report())
	}
	t.Logf("pipeline took %v:\n%s", time.Since(start).Round(time.Millisecond), report())
	return out.Bytes()
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$|&;<>()*?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// mtrunArgs returns the common mtrun arguments against an engine.
func mtrunArgs(t *testing.T, e *engine, extra ...string) []string {
	t.Helper()
	args := []string{bin(t, "mtrun"), "--url", e.URL, "--model", modelName, "--tokenizer", s.tokenizer, "--quiet"}
	return append(args, extra...)
}

// qwen returns the Qwen tokenizer the model was built from.
func qwen(t testing.TB) tokenize.Tokenizer {
	t.Helper()
	tok, err := tokenize.Load(s.tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// chatML renders messages and the generation prompt as the Modelfile's
// template does.
func chatML(msgs []conv.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// templateOverhead is the number of tokens the ChatML template adds to a
// prompt of n messages: "<|im_start|>", the role and "\n" before each
// content, "<|im_end|>" and "\n" after it, and "<|im_start|>assistant\n".
func templateOverhead(t testing.TB, msgs []conv.Message) int {
	t.Helper()
	tok := qwen(t)
	n := tok.Count("<|im_start|>assistant\n")
	for _, m := range msgs {
		n += tok.Count("<|im_start|>"+m.Role+"\n") + tok.Count("<|im_end|>\n")
	}
	return n
}

// rawRecord is one record line with its raw fields, to tell null from
// absent from zero.
type rawRecord struct {
	record.Record
	raw map[string]json.RawMessage
}

// readRecords reads every record of a JSONL or Parquet file or buffer
// through the record package, failing on any malformed line.
func readRecords(t *testing.T, path string, data []byte) []rawRecord {
	t.Helper()
	if data == nil {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return readParquetRecords(t, path) // mtrun's Parquet parts
		}
		var err error
		if data, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.HasPrefix(data, []byte("PAR1")) {
		return readParquetRecords(t, path)
	}
	var recs []rawRecord
	for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r rawRecord
		if err := json.Unmarshal(line, &r.Record); err != nil {
			t.Fatalf("records %s:%d: %v\n%s", path, i+1, err, line)
		}
		if err := json.Unmarshal(line, &r.raw); err != nil {
			t.Fatalf("records %s:%d: %v", path, i+1, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// readParquetRecords reads a Parquet file or parts directory as mtstats
// does.
func readParquetRecords(t *testing.T, path string) []rawRecord {
	t.Helper()
	var recs []rawRecord
	f := &record.Files{Paths: []string{path}}
	defer f.Close()
	for f.Scan() {
		if err := f.Err(); err != nil {
			t.Fatalf("records %s: %v", path, err)
		}
		recs = append(recs, rawRecord{Record: *f.Record()})
	}
	if err := f.Err(); err != nil {
		t.Fatalf("records %s: %v", path, err)
	}
	return recs
}

// readConversations reads a conversation JSONL file through the conv package.
func readConversations(t *testing.T, name string, data []byte) []conv.Conversation {
	t.Helper()
	out, err := conv.ReadAll(bytes.NewReader(data), name)
	if err != nil {
		t.Fatalf("conversations %s: %v", name, err)
	}
	return out
}

func writeConversations(t *testing.T, path string, convs []conv.Conversation) {
	t.Helper()
	var b bytes.Buffer
	w := conv.NewWriter(&b)
	for i := range convs {
		if err := w.Write(&convs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// words returns n tokens' worth of distinct text (about one token per
// word), unique per salt so that no earlier request shares its prefix.
func words(t testing.TB, salt string, n int) string {
	t.Helper()
	tok := qwen(t)
	vocab := []string{"river", "stone", "market", "lantern", "window", "garden", "copper", "winter",
		"harbor", "engine", "pencil", "forest", "signal", "bridge", "candle", "orange", "planet", "silver"}
	var b strings.Builder
	b.WriteString(salt)
	for i := 0; tok.Count(b.String()) < n; i++ {
		fmt.Fprintf(&b, " %s", vocab[(i*7+len(salt))%len(vocab)])
		if i%13 == 12 {
			fmt.Fprintf(&b, " %d.", i)
		}
	}
	text := b.String()
	// Trim to exactly n tokens by decoding the first n ids.
	ids := tok.Encode(text)
	text = tok.Decode(ids[:n])
	if got := tok.Count(text); got != n {
		t.Fatalf("words: %d tokens, want %d", got, n)
	}
	return text
}

// byTurn groups records by conversation and orders them by turn.
func byTurn(recs []rawRecord) map[string][]rawRecord {
	m := map[string][]rawRecord{}
	for _, r := range recs {
		m[r.ConversationID] = append(m[r.ConversationID], r)
	}
	for _, rs := range m {
		slices.SortFunc(rs, func(a, b rawRecord) int { return a.Turn - b.Turn })
	}
	return m
}

func ptrVal(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func ms(ns *int64) float64 {
	if ns == nil {
		return -1
	}
	return float64(*ns) / 1e6
}

// exitCode returns the exit status of a finished command's error.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
