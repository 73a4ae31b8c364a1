package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string // golden file of stdout, "" = must be empty
		stderrIs string
	}{
		{"help", []string{"--help"}, 0, "help.stdout", ""},
		{"bad config", []string{"--config", "ttft=5"}, 2, "", `mtsim: --config: sim config: item 1 "ttft=5": ttft: duration "5" needs a unit (e.g. 5ms)` + "\n"},
		{"unknown key", []string{"-c", "fast=1"}, 2, "", ""},
		{"bad flag", []string{"--nope"}, 2, "", ""},
		{"argument", []string{"extra"}, 2, "", "mtsim: unexpected argument \"extra\"\n"},
		{"bad addr", []string{"--addr", "127.0.0.1:99999"}, 1, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"mtsim"}, tt.args...), command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errb.String())
			}
			if tt.stdout == "" {
				if out.Len() != 0 {
					t.Errorf("stdout not empty: %q", out.String())
				}
				if errb.Len() == 0 {
					t.Error("no message on stderr")
				}
			} else {
				clitest.Golden(t, filepath.Join("testdata", tt.stdout), out.Bytes())
			}
			if tt.stderrIs != "" && errb.String() != tt.stderrIs {
				t.Errorf("stderr %q, want %q", errb.String(), tt.stderrIs)
			}
		})
	}
}

// TestServeUntilSignal starts mtsim, reads the URL from the first stdout
// line, uses the server, and stops it with a signal.
func TestServeUntilSignal(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	var errb clitest.Buffer
	sig := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), []string{"mtsim", "--config", "fail-every=2,status=503,model=m", "--seed", "3"},
			command.Streams{In: strings.NewReader(""), Out: pw, Err: &errb, Signals: sig})
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (stderr: %s)", err, errb.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first stdout line %q", line)
	}
	var statuses []int
	for range 2 {
		resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"m","prompt":"x","max_tokens":2}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	if statuses[0] != 200 || statuses[1] != 503 {
		t.Errorf("statuses %v, want [200 503]", statuses)
	}
	sig <- syscall.SIGTERM
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d; stderr: %s", c, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mtsim did not stop on SIGTERM")
	}
	for _, want := range []string{`serving model "m"`, "stopped: 2 requests, 1 completed", "1 injected errors"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr misses %q:\n%s", want, errb.String())
		}
	}
}
