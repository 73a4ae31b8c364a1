//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
)

// longConversations writes n conversations of turns turns with answers of
// maxTokens tokens: a run that takes far longer than the tests wait.
func longConversations(t *testing.T, path string, n, turns, maxTokens int) {
	t.Helper()
	var convs []conv.Conversation
	for i := range n {
		c := conv.Conversation{ID: fmt.Sprintf("long-%d", i)}
		for k := range turns {
			c.Messages = append(c.Messages,
				conv.Message{Role: conv.RoleUser, Content: fmt.Sprintf("Conversation %d, turn %d: go on about the copper bridge.", i, k)},
				conv.Message{Role: conv.RoleAssistant, Content: "x", OutputTokens: maxTokens},
			)
		}
		convs = append(convs, c)
	}
	writeConversations(t, path, convs)
}

// startMtrun starts mtrun in the background; its stderr goes to a buffer.
func startMtrun(t *testing.T, args []string) (*exec.Cmd, *bytes.Buffer, chan error) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd, &stderr, done
}

// waitRecords waits until the JSONL file at path has at least n lines.
func waitRecords(t *testing.T, path string, n int, timeout time.Duration, done chan error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte("\n")) >= n {
			return
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("mtrun exited (%v) before writing %d records", err, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("no %d records in %s after %v", n, path, timeout)
}

// waitExit waits for mtrun to exit and returns its exit code.
func waitExit(t *testing.T, done chan error, timeout time.Duration, stderr *bytes.Buffer) int {
	t.Helper()
	select {
	case err := <-done:
		t.Logf("mtrun exited: %v\n%s", err, stderr)
		return exitCode(err)
	case <-time.After(timeout):
		t.Fatalf("mtrun still running %v later: it hangs\n%s", timeout, stderr)
		return -1
	}
}

// TestSIGINT interrupts mtrun in the middle of a run: it must stop
// starting turns, exit with status 130, and leave complete records (JSONL
// and Parquet) and -o conversations holding the real answers so far.
func TestSIGINT(t *testing.T) {
	for _, ext := range []string{"jsonl", "parquet"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			in, recPath, answers := filepath.Join(dir, "conv.jsonl"), filepath.Join(dir, "records."+ext), filepath.Join(dir, "answers.jsonl")
			longConversations(t, in, 12, 8, 48)
			cmd, stderr, done := startMtrun(t, mtrunArgs(t, s.eng, "--clients", "3", "--records", recPath, "-o", answers, in))
			if ext == "jsonl" {
				waitRecords(t, recPath, 4, 3*time.Minute, done)
			} else {
				time.Sleep(3 * time.Second) // a Parquet file cannot be read before its footer
			}
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			code := waitExit(t, done, 2*time.Minute, stderr)
			t.Logf("exit %d, %v after SIGINT", code, time.Since(sent).Round(time.Millisecond))
			if code != 130 {
				t.Errorf("exit status %d after SIGINT, want 130", code)
			}
			recs := readRecords(t, recPath, nil)
			if len(recs) == 0 || len(recs) >= 96 {
				t.Fatalf("%d records after SIGINT, want some and fewer than all 96", len(recs))
			}
			ok := 0
			for _, r := range recs {
				if r.OK() {
					ok++
					if ptrVal(r.CompletionTokens) != 48 {
						t.Errorf("%s turn %d: completion_tokens %d, want 48", r.ConversationID, r.Turn, ptrVal(r.CompletionTokens))
					}
				} else if r.ErrorClass != "canceled" {
					t.Errorf("%s turn %d: error %s %s, want ok or canceled", r.ConversationID, r.Turn, r.ErrorClass, r.Error)
				}
			}
			if ok == 0 {
				t.Error("no successful record before the interrupt")
			}
			answered := readConversations(t, answers, mustRead(t, answers))
			if len(answered) == 0 {
				t.Fatal("-o is empty after SIGINT")
			}
			want := s.info.answer(48)
			for _, c := range answered {
				for _, m := range c.Messages {
					if m.Role == conv.RoleAssistant && m.Content != want && m.Content != "x" {
						t.Errorf("%s: answer %.60q is neither the model's nor the dataset's", c.ID, m.Content)
					}
				}
			}
		})
	}
}

// TestServerKilled kills the engine in the middle of a run: the requests
// in flight and those after must become failed records, and the run must
// finish on its own.
func TestServerKilled(t *testing.T) {
	eng, err := startEngine(engineOptions{name: "killed", parallel: 2, context: 8192})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	dir := t.TempDir()
	in, recPath := filepath.Join(dir, "conv.jsonl"), filepath.Join(dir, "records.jsonl")
	longConversations(t, in, 4, 5, 64)
	_, stderr, done := startMtrun(t, mtrunArgs(t, eng, "--clients", "2", "--max-retries", "1",
		"--request-timeout", "60", "--records", recPath, in))
	waitRecords(t, recPath, 2, 3*time.Minute, done)
	killed := time.Now()
	eng.Kill()
	code := waitExit(t, done, 3*time.Minute, stderr)
	t.Logf("mtrun finished %v after the kill, exit %d", time.Since(killed).Round(time.Millisecond), code)

	recs := readRecords(t, recPath, nil)
	var ok, failed int
	classes := map[string]int{}
	for _, r := range recs {
		if r.OK() {
			ok++
			continue
		}
		failed++
		classes[r.ErrorClass]++
		if r.Error == "" {
			t.Errorf("%s turn %d: error class %s with no message", r.ConversationID, r.Turn, r.ErrorClass)
		}
	}
	t.Logf("%d records: %d ok, %d failed %v", len(recs), ok, failed, classes)
	if ok == 0 || failed == 0 {
		t.Errorf("%d ok and %d failed records, want both", ok, failed)
	}
	for class := range classes {
		switch class {
		case "connect", "stream", "timeout", "http_5xx":
		default:
			t.Errorf("error class %q for a dead server", class)
		}
	}
}
