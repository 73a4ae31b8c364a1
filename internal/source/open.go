package source

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/jsonl"
)

// Errors about an input's content as a whole; Open wraps them with the
// input's name. IsBadInput reports them and located syntax errors.
var (
	// ErrUnknownFormat: no registered format detects the input.
	ErrUnknownFormat = errors.New("no input format matches")
	// ErrAmbiguous: several registered formats detect the input.
	ErrAmbiguous = errors.New("several input formats match")
	// ErrEmpty: the input holds no session.
	ErrEmpty = errors.New("no conversations")
)

// IsBadInput reports whether err is about the input's content (a bad
// record, "file:line: field: problem", or an input no format reads, or
// an empty one) rather than about reading it: mtrun exits with the usage
// code for these, as for a bad flag.
func IsBadInput(err error) bool {
	var je *jsonl.Error
	return errors.As(err, &je) || errors.Is(err, ErrUnknownFormat) || errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrEmpty)
}

// Names returns the names of the registered formats, sorted, for help
// texts and errors.
func Names() []string {
	var names []string
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	return names
}

// LookupUsage returns the format named name, or an error listing the
// valid names.
func LookupUsage(name string) (Format, error) {
	if f, ok := Lookup(name); ok {
		return f, nil
	}
	return Format{}, fmt.Errorf("unknown input format %q: want one of %s", name, strings.Join(Names(), ", "))
}

// Detect returns the one registered format whose Detect accepts the
// input named name starting with head (at most DetectBytes are looked
// at). Errors wrap ErrEmpty (head is only white space),
// ErrUnknownFormat or ErrAmbiguous, name the input and list the formats.
func Detect(name string, head []byte) (Format, error) {
	if len(head) > DetectBytes {
		head = head[:DetectBytes]
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return Format{}, fmt.Errorf("%s: %w: the input is empty", name, ErrEmpty)
	}
	var found []Format
	for _, f := range Formats() {
		if f.Detect != nil && f.Detect(name, head) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		where := name
		if err := SniffJSON(head).Err; err != nil {
			// "file:3: invalid character ...": what probably went wrong.
			where = fmt.Sprintf("%s:%s", name, strings.TrimPrefix(err.Error(), "line "))
		}
		return Format{}, fmt.Errorf("%s: %w (known formats: %s; name one with --input-format)", where, ErrUnknownFormat, strings.Join(Names(), ", "))
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Name)
	}
	return Format{}, fmt.Errorf("%s: %w: %s; name one with --input-format", name, ErrAmbiguous, strings.Join(names, ", "))
}

// Input is an opened input: its sessions, read as they are asked for,
// and what is known about the input.
type Input struct {
	Source
	// Format is the input's format, named or detected.
	Format Format
	// Name is the input's name in messages: its path, or "stdin".
	Name string

	in    *iox.Input
	rest  *bufio.Reader // what the format has not read yet
	hash  hash.Hash
	first *conv.Conversation // read by Open, not yet handed out
	n     int
	timed bool
}

// Open opens path ("-" is stdin; gzip and zstd are decompressed) in the
// format named format, or the one detected from its head when format is
// "". It reads the first session, so that an empty input or a bad first
// record fails here, before a run starts; the rest is read as Next asks.
// Close the Input when done.
func Open(path, format string, stdin io.Reader, o Options) (*Input, error) {
	var f Format
	if format != "" {
		var err error
		if f, err = LookupUsage(format); err != nil {
			return nil, err
		}
	}
	in, err := iox.Open(path, stdin)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(in, h), DetectBytes)
	head, err := br.Peek(DetectBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		in.Close()
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	if format == "" {
		if f, err = Detect(in.Name, head); err != nil {
			in.Close()
			return nil, err
		}
	}
	src, err := f.Open(br, in.Name, o)
	if err != nil {
		in.Close()
		return nil, err
	}
	input := &Input{Source: src, Format: f, Name: in.Name, in: in, rest: br, hash: h}
	c, ok := src.Next()
	if !ok {
		err := src.Err()
		if err == nil {
			err = fmt.Errorf("%s: %w (format %s)", in.Name, ErrEmpty, f.Name)
		}
		input.Close()
		return nil, err
	}
	input.first = &c
	input.timed = f.Timed || hasTimestamps(&c)
	return input, nil
}

// Timed reports whether the input carries trace timestamps: its format
// is timed, or its first session has a user message with timestamp_ms
// (conversation JSONL that mtconvert wrote from a trace).
func (in *Input) Timed() bool { return in.timed }

func hasTimestamps(c *conv.Conversation) bool {
	for _, m := range c.Messages {
		if m.TimestampMs != nil {
			return true
		}
	}
	return false
}

// Next returns the next session.
func (in *Input) Next() (conv.Conversation, bool) {
	if c := in.first; c != nil {
		in.first = nil
		in.n++
		return *c, true
	}
	c, ok := in.Source.Next()
	if ok {
		in.n++
	}
	return c, ok
}

// Sessions returns the number of sessions handed out so far.
func (in *Input) Sessions() int { return in.n }

// Digest returns the SHA-256 (hex) of the input's bytes (decompressed;
// for a generate_conversations config, the config's): it reads what the
// format left unread, so call it after the replay and before Close.
func (in *Input) Digest() (string, error) {
	if _, err := io.Copy(io.Discard, in.rest); err != nil {
		return "", fmt.Errorf("%s: %w", in.Name, err)
	}
	return hex.EncodeToString(in.hash.Sum(nil)), nil
}

// Close closes the source and the input.
func (in *Input) Close() error {
	err := in.Source.Close()
	if cerr := in.in.Close(); err == nil {
		err = cerr
	}
	return err
}
