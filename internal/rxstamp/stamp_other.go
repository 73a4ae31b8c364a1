//go:build !linux

package rxstamp

import (
	"net"
	"time"
)

// Reader reads a TCP connection with the kernel's receive stamps; this
// system has none (New returns nil).
type Reader struct{ nc net.Conn }

// New returns nil: receive stamps are read on Linux only.
func New(net.Conn) *Reader { return nil }

// Received is the current time.
func (r *Reader) Received() time.Time { return time.Now() }

// Read reads from the connection.
func (r *Reader) Read(p []byte) (int, error) { return r.nc.Read(p) }
