// Package faultio has writers that fail the way real outputs do, for
// tests of what the tools do on a full disk.
package faultio

import (
	"io"
	"os"
	"syscall"
)

// FullDisk writes through to W until N more bytes would not fit, then
// writes what fits and fails with ENOSPC, like a file on a disk that has
// N bytes left; every later write fails too.
type FullDisk struct {
	W io.Writer
	N int
}

// Write implements io.Writer.
func (f *FullDisk) Write(p []byte) (int, error) {
	if len(p) > f.N {
		k, _ := f.W.Write(p[:f.N])
		f.N = 0
		return k, &os.PathError{Op: "write", Path: "disk", Err: syscall.ENOSPC}
	}
	f.N -= len(p)
	return f.W.Write(p)
}
