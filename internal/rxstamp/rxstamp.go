// Package rxstamp reads TCP connections together with when the bytes read
// reached the machine: the kernel's receive stamp of each read's last
// segment (SO_TIMESTAMPNS, on Linux), taken when the kernel's network
// stack received it (on loopback, when it delivered it to TCP: on a
// loaded machine the kernel defers that work, and the stamp with it, up
// to tens of milliseconds after the sender's write; the kernel starts
// stamping for the whole machine a moment after the first socket asks,
// and reads before then get the time of the read). A client that stamps
// a streamed reply's chunks with it gets their arrival, not its own
// wake-up after them (on a busy machine that wait runs from microseconds
// to tens of milliseconds, and it is the reader's, not the sender's); a
// server gets when a request arrived, before its own scheduling.
package rxstamp

import (
	"net"
	"time"
)

// Conn is a connection whose reads go through a Reader (for a server:
// net/http reads it as any net.Conn).
type Conn struct {
	net.Conn
	R *Reader
}

// Read reads through c.R.
func (c *Conn) Read(p []byte) (int, error) { return c.R.Read(p) }

// anchor is the origin of stamps held as integers (atomically), on the
// monotonic clock.
var anchor = time.Now()

// maxHeld bounds how long bytes are taken to have waited in a socket: a
// kernel stamp further back means the wall clock stepped.
const maxHeld = time.Minute
