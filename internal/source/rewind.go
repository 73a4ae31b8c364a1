package source

import "github.com/mtkit/mtkit/internal/conv"

// Rewind lets s be read twice from the start, as mtrun's --warmup-step
// does (the first turn of every conversation, then the whole replay):
// first yields s's sessions and keeps each one it hands out; again
// returns a Source that yields the kept sessions, then the rest of s
// (call it once).
// Memory holds every session the first pass read (all of them for a
// warmup step that runs to the end). Closing either does not close s.
func Rewind(s Source) (first Source, again func() Source) {
	rw := &rewound{src: s}
	return &rewindFirst{rw}, func() Source { return &rewindAgain{rw: rw} }
}

type rewound struct {
	src  Source
	kept []conv.Conversation
}

type rewindFirst struct{ rw *rewound }

func (f *rewindFirst) Next() (conv.Conversation, bool) {
	c, ok := f.rw.src.Next()
	if ok {
		f.rw.kept = append(f.rw.kept, c)
	}
	return c, ok
}

func (f *rewindFirst) Err() error   { return f.rw.src.Err() }
func (f *rewindFirst) Close() error { return nil }

type rewindAgain struct {
	rw *rewound
	i  int
}

func (a *rewindAgain) Next() (conv.Conversation, bool) {
	if a.i < len(a.rw.kept) {
		c := a.rw.kept[a.i]
		a.rw.kept[a.i] = conv.Conversation{} // handed out: the replay holds it now
		a.i++
		return c, true
	}
	return a.rw.src.Next()
}

func (a *rewindAgain) Err() error   { return a.rw.src.Err() }
func (a *rewindAgain) Close() error { return nil }
