package source

import (
	"errors"
	"iter"

	"github.com/mtkit/mtkit/internal/conv"
)

// writerFunc adapts a function to the Write method of gen.Writer and
// convert.Writer.
type writerFunc func(c *conv.Conversation) error

func (f writerFunc) Write(c *conv.Conversation) error { return f(c) }

// errStopped ends a producer whose consumer was closed.
var errStopped = errors.New("source closed")

// pulled is a Source over a producer that pushes conversations to a
// writer (gen.Run, convert.Run). The producer runs as a coroutine
// (iter.Pull): it makes the next conversation only when Next asks, so
// nothing is read or generated ahead of the replay.
type pulled struct {
	next func() (conv.Conversation, bool)
	stop func()
	err  error
}

// pull returns a Source over produce, which writes each conversation to
// w and returns at the end of its input (or when a Write fails).
func pull(produce func(w writerFunc) error) *pulled {
	p := &pulled{}
	p.next, p.stop = iter.Pull(func(yield func(conv.Conversation) bool) {
		err := produce(func(c *conv.Conversation) error {
			if !yield(*c) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			p.err = err
		}
	})
	return p
}

func (p *pulled) Next() (conv.Conversation, bool) { return p.next() }
func (p *pulled) Err() error                      { return p.err }

func (p *pulled) Close() error {
	p.stop()
	return nil
}
