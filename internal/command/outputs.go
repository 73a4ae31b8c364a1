package command

import (
	"fmt"
	"io"
	"strings"
)

// Outputs closes a tool's outputs once, in the order they were added.
type Outputs struct {
	names   []string
	closers []io.Closer
	closed  bool
}

// Add adds the output c, named name in errors.
func (o *Outputs) Add(name string, c io.Closer) {
	o.names, o.closers = append(o.names, name), append(o.closers, c)
}

// Close closes every output (the first time it is called) and returns the
// first error.
func (o *Outputs) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	var first error
	for i, c := range o.closers {
		if err := c.Close(); err != nil && first == nil {
			first = fmt.Errorf("closing %s: %w", o.names[i], err)
		}
	}
	return first
}

// FirstError returns the first non-nil error, with the later ones as
// "tool: also:" lines after its message, so no failure goes unseen but
// none hides the first (which keeps deciding the exit status).
func FirstError(tool string, errs ...error) error {
	var first *alsoError
	for _, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = &alsoError{tool: tool, err: err}
		default:
			first.also = append(first.also, err)
		}
	}
	if first == nil {
		return nil
	}
	if len(first.also) == 0 {
		return first.err
	}
	return first
}

// alsoError is an error followed by later ones, printed after it.
type alsoError struct {
	tool string
	err  error
	also []error
}

func (e *alsoError) Error() string {
	var b strings.Builder
	b.WriteString(e.err.Error())
	for _, a := range e.also {
		b.WriteString("\n" + e.tool + ": also: " + a.Error())
	}
	return b.String()
}

func (e *alsoError) Unwrap() error { return e.err }
