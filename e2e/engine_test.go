//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// modelName is the name the tiny model is created under in Ollama.
const modelName = "mtkit-tiny"

// Engine settings of the shared server.
const (
	numParallel   = 4
	contextLength = 16384
)

var keepWork = flag.Bool("keep", false, "keep the work directory (engine logs, outputs) after the run")

// modelInfo is the description mkgguf writes next to the GGUF.
type modelInfo struct {
	VocabSize  int      `json:"vocab_size"`
	EOS        int      `json:"eos_token_id"`
	EntryToken int      `json:"entry_token_id"`
	CycleIDs   []int    `json:"cycle_token_ids"`
	CycleText  []string `json:"cycle_text"`
}

// answer returns the text the model generates for n tokens: the cycle from
// its start, since every prompt ends with the entry token "\n".
func (m *modelInfo) answer(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(m.CycleText[i%len(m.CycleText)])
	}
	return b.String()
}

// suite is what TestMain prepares for every test.
type suite struct {
	root      string            // repository root
	work      string            // scratch directory of the run
	ollama    string            // ollama binary
	tokenizer string            // Qwen tokenizer.json
	gguf      string            // the generated model
	info      modelInfo         // its wired behaviour
	bins      map[string]string // mt* binary paths by name
	binErr    map[string]error  // build errors by name
	models    string            // OLLAMA_MODELS shared by every engine
	eng       *engine           // the shared engine
}

var s suite

// TestMain builds everything, starts the shared engine, runs the tests and
// stops every engine it started: on return, on SIGINT/SIGTERM, and (through
// a watchdog process) when the test binary dies of a panic or -timeout.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		got := <-sig
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping engines\n", got)
		stopAllEngines()
		os.Exit(130)
	}()
	defer stopAllEngines()

	start := time.Now()
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setup: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: setup took %v (engine %s, model %s)\n", time.Since(start).Round(time.Millisecond), s.eng.URL, s.gguf)
	code := m.Run()
	if code != 0 || *keepWork {
		fmt.Fprintf(os.Stderr, "e2e: work directory kept: %s\n", s.work)
		return code
	}
	stopAllEngines()
	os.RemoveAll(s.work)
	return code
}

func setup() error {
	var err error
	if s.root, err = filepath.Abs(".."); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(s.root, "go.mod")); err != nil {
		return fmt.Errorf("repository root: %w", err)
	}
	if s.work, err = os.MkdirTemp("", "mtkit-e2e-"); err != nil {
		return err
	}
	if s.ollama, err = ollamaBinary(); err != nil {
		return err
	}
	if s.tokenizer, err = qwenTokenizer(); err != nil {
		return err
	}
	s.bins, s.binErr = buildBinaries(filepath.Join(s.work, "bin"),
		"./internal/cmd/mkgguf", "./cmd/mtgen", "./cmd/mtconvert", "./cmd/mtrun", "./cmd/mtstats")
	if err := s.binErr["mkgguf"]; err != nil {
		return err
	}
	out, err := output(exec.Command(s.bins["mkgguf"], "-tokenizer", s.tokenizer))
	if err != nil {
		return err
	}
	s.gguf = strings.TrimSpace(out)
	info, err := os.ReadFile(strings.TrimSuffix(s.gguf, ".gguf") + ".json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(info, &s.info); err != nil {
		return fmt.Errorf("model description: %w", err)
	}
	s.models = filepath.Join(s.work, "models")
	s.eng, err = startEngine(engineOptions{name: "shared", parallel: numParallel, context: contextLength, create: true})
	return err
}

// ollamaBinary returns $MTKIT_OLLAMA or builds (or finds cached) Ollama with
// scripts/ollama/build.sh.
func ollamaBinary() (string, error) {
	if p := os.Getenv("MTKIT_OLLAMA"); p != "" {
		return p, nil
	}
	cmd := exec.Command("bash", filepath.Join(s.root, "scripts", "ollama", "build.sh"))
	cmd.Stderr = os.Stderr
	out, err := output(cmd)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// qwenTokenizer returns $MTKIT_QWEN_TOKENIZER or the Qwen3 tokenizer.json
// that scripts/fixtures.sh installs.
func qwenTokenizer() (string, error) {
	if p := os.Getenv("MTKIT_QWEN_TOKENIZER"); p != "" {
		return p, nil
	}
	cmd := exec.Command("bash", filepath.Join(s.root, "scripts", "fixtures.sh"))
	cmd.Stderr = os.Stderr
	out, err := output(cmd)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, "/qwen3/tokenizer.json") {
			return line, nil
		}
	}
	return "", fmt.Errorf("scripts/fixtures.sh printed no qwen3/tokenizer.json:\n%s", out)
}

// buildBinaries builds each package into dir, one by one so that a package
// that does not compile fails only the tests that need it.
func buildBinaries(dir string, pkgs ...string) (map[string]string, map[string]error) {
	bins, errs := map[string]string{}, map[string]error{}
	for _, p := range pkgs {
		name := filepath.Base(p)
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bin, p)
		cmd.Dir = s.root
		if out, err := cmd.CombinedOutput(); err != nil {
			errs[name] = fmt.Errorf("go build %s: %w\n%s", p, err, out)
			continue
		}
		bins[name] = bin
	}
	return bins, errs
}

// bin returns the path of a built mt* binary, failing the test when it did
// not build.
func bin(t testing.TB, name string) string {
	t.Helper()
	if err := s.binErr[name]; err != nil {
		t.Fatalf("%s is needed and did not build: %v", name, err)
	}
	return s.bins[name]
}

// output runs cmd and returns its stdout, with its stderr in the error.
func output(cmd *exec.Cmd) (string, error) {
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return string(out), nil
}

// engineOptions configures one Ollama server.
type engineOptions struct {
	name     string // for logs
	parallel int    // OLLAMA_NUM_PARALLEL
	context  int    // OLLAMA_CONTEXT_LENGTH
	create   bool   // create the model (once per models directory)
	// debug sets OLLAMA_DEBUG: the log names the cache slot each request
	// loads ("loading cache slot") and how many of its inputs it reuses.
	debug bool
}

// engine is one running `ollama serve` in its own process group.
type engine struct {
	URL     string // http://127.0.0.1:PORT
	name    string
	dir     string
	logPath string
	cmd     *exec.Cmd
	guard   *exec.Cmd // watchdog that kills the group if the test binary dies
	done    chan struct{}
	waitErr error
	stop    sync.Once
}

var (
	enginesMu sync.Mutex
	engines   []*engine
)

func stopAllEngines() {
	enginesMu.Lock()
	all := append([]*engine(nil), engines...)
	enginesMu.Unlock()
	for _, e := range all {
		e.Stop()
	}
}

// startEngine starts Ollama on a free port, creates the model if asked and
// returns once a chat completion succeeds.
func startEngine(o engineOptions) (*engine, error) {
	var lastErr error
	for range 3 { // the free port can be taken between probe and bind
		e, err := tryStartEngine(o)
		if err == nil {
			return e, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func tryStartEngine(o engineOptions) (*engine, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(s.work, "engine-"+o.name+"-")
	if err != nil {
		return nil, err
	}
	e := &engine{
		URL:     "http://127.0.0.1:" + strconv.Itoa(port),
		name:    o.name,
		dir:     dir,
		logPath: filepath.Join(dir, "ollama.log"),
		done:    make(chan struct{}),
	}
	logf, err := os.Create(e.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	env := ollamaEnv(port, dir, o)
	e.cmd = exec.Command(s.ollama, "serve")
	e.cmd.Env = env
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		e.waitErr = e.cmd.Wait()
		close(e.done)
	}()
	enginesMu.Lock()
	engines = append(engines, e)
	enginesMu.Unlock()
	// The watchdog outlives a killed test binary (own session) and then
	// kills the engine's whole process group (server and runner).
	e.guard = exec.Command("bash", "-c", // bash: dash's kill does not take "-- -PGID"
		`while kill -0 "$0" 2>/dev/null && kill -0 "$1" 2>/dev/null; do sleep 0.5; done; kill -KILL -- "-$1" 2>/dev/null`,
		strconv.Itoa(os.Getpid()), strconv.Itoa(e.cmd.Process.Pid))
	e.guard.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := e.guard.Start(); err != nil {
		e.Stop()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	go e.guard.Wait()

	fail := func(err error) (*engine, error) {
		e.Stop()
		return nil, fmt.Errorf("engine %s: %w\n%s", o.name, err, e.logTail(30))
	}
	if err := e.waitHTTP("/api/version", 60*time.Second); err != nil {
		return fail(err)
	}
	if o.create {
		mf := filepath.Join(dir, "Modelfile")
		body, err := os.ReadFile(filepath.Join(s.root, "scripts", "ollama", "chatml.modelfile"))
		if err != nil {
			return fail(err)
		}
		if err := os.WriteFile(mf, append([]byte("FROM "+s.gguf+"\n"), body...), 0o644); err != nil {
			return fail(err)
		}
		create := exec.Command(s.ollama, "create", modelName, "-f", mf)
		create.Env = env
		if out, err := create.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("ollama create: %w\n%s", err, out))
		}
	}
	if err := e.waitChat(3 * time.Minute); err != nil {
		return fail(err)
	}
	return e, nil
}

// ollamaEnv is the environment of an engine: the caller's without OLLAMA_*
// variables, plus the engine's settings.
func ollamaEnv(port int, dir string, o engineOptions) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OLLAMA_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	if o.debug {
		env = append(env, "OLLAMA_DEBUG=1")
	}
	return append(env,
		"HOME="+dir, // Ollama writes its key pair under $HOME/.ollama
		"OLLAMA_HOST=127.0.0.1:"+strconv.Itoa(port),
		"OLLAMA_MODELS="+s.models,
		"OLLAMA_NUM_PARALLEL="+strconv.Itoa(o.parallel),
		"OLLAMA_CONTEXT_LENGTH="+strconv.Itoa(o.context),
		"OLLAMA_KEEP_ALIVE=-1", // never unload the model between tests
		"OLLAMA_MAX_LOADED_MODELS=1",
		"OLLAMA_NOPRUNE=1", // engines share the models directory
	)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// exited reports whether the server process has exited.
func (e *engine) exited() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

func (e *engine) waitHTTP(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if e.exited() {
			return fmt.Errorf("ollama serve exited: %v", e.waitErr)
		}
		resp, err := http.Get(e.URL + path)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitChat waits until a one-token chat completion succeeds, which also
// loads the model into the runner.
func (e *engine) waitChat(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if e.exited() {
			return fmt.Errorf("ollama serve exited: %v", e.waitErr)
		}
		_, err := e.chat(context.Background(), chatRequest{
			Messages:  []chatMessage{{Role: "user", Content: "ready?"}},
			MaxTokens: 1,
		})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no chat completion after %v: %w", timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Stop stops the server: SIGTERM to its process group, SIGKILL after 10 s.
// It is safe to call more than once and from several goroutines.
func (e *engine) Stop() {
	e.stop.Do(func() {
		pgid := e.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-e.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-e.done
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // a runner that outlived the server
		if e.guard != nil && e.guard.Process != nil {
			_ = e.guard.Process.Kill()
		}
	})
}

// Kill kills the server and its runner at once, as a crash would.
func (e *engine) Kill() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	<-e.done
	e.Stop()
}

// logTail returns the last n lines of the server log.
func (e *engine) logTail(n int) string {
	b, err := os.ReadFile(e.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "--- " + e.logPath + " (tail) ---\n" + strings.Join(lines, "\n")
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	MaxTokens     int           `json:"max_tokens"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
}

// chatResult is what one streamed chat completion gave.
type chatResult struct {
	Content      string
	FinishReason string
	Usage        map[string]json.RawMessage // raw, to see which fields exist
	TTFT         time.Duration
	Latency      time.Duration
	Chunks       int
	Done         bool // the stream ended with [DONE]
}

// chat sends a streaming chat completion with usage and collects it.
func (e *engine) chat(ctx context.Context, req chatRequest) (*chatResult, error) {
	if req.Model == "" {
		req.Model = modelName
	}
	req.Stream = true
	req.StreamOptions = &struct {
		IncludeUsage bool `json:"include_usage"`
	}{true}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s", resp.Status, b)
	}
	res := &chatResult{}
	var content strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			res.Done = true
			break
		}
		var chunk struct {
			Choices []struct {
				Delta        struct{ Content string }
				FinishReason *string `json:"finish_reason"`
			}
			Usage map[string]json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return nil, fmt.Errorf("chunk %q: %w", data, err)
		}
		res.Chunks++
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" && res.TTFT == 0 {
				res.TTFT = time.Since(start)
			}
			content.WriteString(c.Delta.Content)
			if c.FinishReason != nil {
				res.FinishReason = *c.FinishReason
			}
		}
		if chunk.Usage != nil {
			res.Usage = chunk.Usage
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	res.Latency = time.Since(start)
	res.Content = content.String()
	if !res.Done {
		return res, errors.New("stream ended without [DONE]")
	}
	return res, nil
}

// usageInt returns an integer usage field, or -1 when absent.
func (r *chatResult) usageInt(name string) int {
	v, ok := r.Usage[name]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return -1
	}
	return n
}
