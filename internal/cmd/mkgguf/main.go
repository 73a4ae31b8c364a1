// Command mkgguf writes the tiny GGUF model that mtkit's end-to-end tests
// serve with a real inference engine (Ollama, llama.cpp inside).
//
// The model has architecture "qwen2" (64-wide, 2 layers, about 40 MB) and the
// real Qwen vocabulary, merges and token types, taken from a tokenizer.json,
// so that the engine's token counts match the client's Qwen tokenizer. Its
// random weights come from a fixed seed and are wired so that greedy (and
// low-temperature) decoding walks a long cycle of distinct word tokens: the
// output is deterministic text, never EOS or a special token, and always as
// long as max_tokens. Attention and FFN weights are small but not zero, so
// the engine computes and caches attention over the whole history as for a
// real model.
//
// Usage:
//
//	mkgguf -tokenizer PATH/tokenizer.json [-o FILE.gguf] [-force]
//
// It prints the path of the GGUF on stdout. Next to it, FILE.json describes
// the wired behaviour (entry token, cycle token ids and texts) and
// FILE.stamp records the generator version and the tokenizer's SHA-256: when
// both match, the existing file is kept and nothing is written.
//
// The default output is $MTKIT_CACHE/models/mtkit-tiny-qwen2.gguf, with
// MTKIT_CACHE defaulting to $HOME/.cache/mtkit.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "mkgguf: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a command-line error (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run is mkgguf with injected arguments and streams.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mkgguf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tokPath := fs.String("tokenizer", "", "Qwen `tokenizer.json` to take the vocabulary from (required)")
	out := fs.String("o", "", "output `file` (default $MTKIT_CACHE/models/mtkit-tiny-qwen2.gguf)")
	force := fs.Bool("force", false, "regenerate even when the stamp matches")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *tokPath == "" {
		return usageError{"-tokenizer is required"}
	}
	if *out == "" {
		dir, err := cacheDir()
		if err != nil {
			return err
		}
		*out = filepath.Join(dir, "models", "mtkit-tiny-qwen2.gguf")
	}
	path, generated, err := ensure(*tokPath, *out, *force)
	if err != nil {
		return err
	}
	if generated {
		fmt.Fprintf(stderr, "mkgguf: wrote %s\n", path)
	}
	_, err = fmt.Fprintln(stdout, path)
	return err
}

// cacheDir returns $MTKIT_CACHE or $HOME/.cache/mtkit.
func cacheDir() (string, error) {
	if d := os.Getenv("MTKIT_CACHE"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cache directory: set MTKIT_CACHE: %w", err)
	}
	return filepath.Join(home, ".cache", "mtkit"), nil
}

// stampFor is the content of the stamp file for a tokenizer digest.
func stampFor(sha string) string {
	return fmt.Sprintf("mkgguf generator=%s tokenizer-sha256=%s\n", GeneratorVersion, sha)
}

// ensure writes the model for tokenizer to out unless out, its description
// and a matching stamp already exist. It reports whether it wrote anything.
func ensure(tokenizer, out string, force bool) (string, bool, error) {
	data, err := os.ReadFile(tokenizer)
	if err != nil {
		return "", false, err
	}
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	stampPath, infoPath := sidecars(out)
	if !force {
		if b, err := os.ReadFile(stampPath); err == nil && string(b) == stampFor(sha) && exists(out) && exists(infoPath) {
			return out, false, nil
		}
	}
	v, err := parseVocab(tokenizer, data)
	if err != nil {
		return "", false, err
	}
	m, err := buildModel(defaultSpec, v, sha)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", tokenizer, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", false, err
	}
	_ = os.Remove(stampPath) // a crash from here on leaves no valid stamp
	if err := writeAtomic(out, func(w io.Writer) error { return writeGGUF(w, m.kvs, m.tensors) }); err != nil {
		return "", false, err
	}
	if err := writeAtomic(infoPath, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m.info)
	}); err != nil {
		return "", false, err
	}
	if err := writeAtomic(stampPath, func(w io.Writer) error {
		_, err := io.WriteString(w, stampFor(sha))
		return err
	}); err != nil {
		return "", false, err
	}
	return out, true, nil
}

// sidecars returns the stamp and description paths of a GGUF path.
func sidecars(gguf string) (stamp, info string) {
	base := gguf[:len(gguf)-len(filepath.Ext(gguf))]
	return base + ".stamp", base + ".json"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeAtomic writes path through a temporary file in the same directory and
// renames it into place, so readers never see a partial file.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
