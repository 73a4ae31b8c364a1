//go:build race

package rxstamp

// raceEnabled: built with the race detector (see Reader.recv).
const raceEnabled = true
