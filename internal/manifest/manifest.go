// Package manifest is mtrun's run manifest: a JSON file that says what was
// asked (the command line with secrets redacted, the settings), with which
// software, on which input and host, and, once the run is over, its
// summary. It is written before the run (so an unwritable path fails
// early) and replaced atomically after it. It is a leaf: mtrun writes it
// (replay.NewManifest says what of a replay goes in), mtstats reads it
// (the segment view), both with this schema and file-name rule (Path).
package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Manifest describes a run. Secrets are never written: the command line
// is redacted (RedactArgs), headers are listed by name, and the whole
// document goes through the run's redactor.
type Manifest struct {
	RunID      string         `json:"run_id"`
	Started    time.Time      `json:"started"`
	Ended      *time.Time     `json:"ended,omitempty"`
	Version    string         `json:"mtkit_version"`
	GoVersion  string         `json:"go_version"`
	Host       string         `json:"host"`
	OS         string         `json:"os"`
	CPUs       int            `json:"cpus"`
	Args       []string       `json:"args"`
	Input      string         `json:"input"`
	InputHash  string         `json:"input_sha256"`
	Tokenizer  string         `json:"tokenizer"`
	URL        string         `json:"url"`
	Model      string         `json:"model,omitempty"`
	MaxModel   int            `json:"max_model_len,omitempty"`
	Settings   map[string]any `json:"settings"`
	Summary    *Summary       `json:"summary,omitempty"`
	Simulated  bool           `json:"simulated"`
	Records    string         `json:"records"`
	ConvOutput string         `json:"conversations_output,omitempty"`
	Metrics    any            `json:"metrics,omitempty"` // the server metrics series, when scraped
}

// Summary is the end of a run as the manifest writes it: snake_case
// names with their units (issue 23: the Go field names, Elapsed in ns
// without a unit). The run id and model are the manifest's own fields.
type Summary struct {
	Requests       int64 `json:"requests"` // turns sent, retries not counted
	Attempts       int64 `json:"attempts"`
	FailedRequests int64 `json:"failed_requests"` // turns that failed after all retries
	Retries        int64 `json:"retries"`
	// Conversations by final status, in mtrun's and mtstats' vocabulary.
	Conversations Conversations `json:"conversations"`
	ElapsedS      float64       `json:"elapsed_s"`
	// WriteBlockedS is the time sessions waited for the output writer.
	WriteBlockedS float64 `json:"write_blocked_s"`
	NextSeq       int64   `json:"next_seq"` // the seq after the last record
	// VerifyOutput is there when answers were compared (--verify-output).
	VerifyOutput *VerifyOutput `json:"verify_output,omitempty"`
}

// VerifyOutput counts the answers compared with the dataset's.
type VerifyOutput struct {
	Compared      int64    `json:"compared"`
	Mismatched    int64    `json:"mismatched"`
	FirstMismatch *TurnRef `json:"first_mismatch,omitempty"`
}

// TurnRef names one turn of one conversation.
type TurnRef struct {
	Conversation string `json:"conversation_id"`
	Turn         int    `json:"turn"`
}

// Conversations counts a run's conversations by final status.
type Conversations struct {
	Started    int64 `json:"started"`
	Finished   int64 `json:"finished"`
	Failed     int64 `json:"failed"`
	Abandoned  int64 `json:"abandoned"`
	Unfinished int64 `json:"unfinished"`
}

// Read reads the manifest at path; its errors are os.ReadFile's and
// json.Unmarshal's, as they are (the caller names the file).
func Read(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Path is the manifest's path: explicit (--manifest) if set, else the
// records file's name with ".manifest.json" for its extensions; "" when
// the records go to stdout and no manifest was asked for.
func Path(explicit, records string) string {
	if explicit != "" {
		return explicit
	}
	if records == "" || records == "-" {
		return ""
	}
	base := records
	for _, ext := range []string{".gz", ".zst", ".parquet", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".manifest.json"
}

// Write writes m as indented JSON, through redact (the run's redactor),
// to path: "-" is stdout, any other path is replaced atomically.
func (m *Manifest) Write(path string, stdout io.Writer, redact func([]byte) ([]byte, error)) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		b, err = redact(b)
	}
	if err != nil {
		return err
	}
	if path == "-" {
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	if err := WriteFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file next to path and
// renames it into place, so a failing write leaves the earlier file; a
// path that exists and is not a regular file (/dev/null, a pipe) is
// written directly.
func WriteFileAtomic(path string, data []byte) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return os.WriteFile(path, data, 0o644)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // it names the temporary file, not path
		}
		return &fs.PathError{Op: "create", Path: path, Err: err}
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Hide is the redaction of a secret value: REDACTED.
func Hide(string) string { return "REDACTED" }

// RedactArgs is the command line args with the value of each flag named
// in redact (without dashes, e.g. "api-key") replaced by what its
// function makes of it (Hide for secrets), in each spelling: --name
// VALUE, -name VALUE, --name=VALUE, -name=VALUE. What follows "--" is
// left alone.
func RedactArgs(args []string, redact map[string]func(string) string) []string {
	fn := func(a string) func(string) string {
		if !strings.HasPrefix(a, "-") {
			return nil
		}
		return redact[strings.TrimLeft(a, "-")]
	}
	out := make([]string, len(args))
	var next func(string) string
	for i, a := range args {
		k, v, hasValue := strings.Cut(a, "=")
		switch {
		case next != nil:
			out[i], next = next(a), nil
		case a == "--":
			copy(out[i:], args[i:])
			return out
		case hasValue && fn(k) != nil:
			out[i] = k + "=" + fn(k)(v)
		default:
			out[i], next = a, fn(a)
		}
	}
	return out
}
