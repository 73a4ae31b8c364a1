//go:build race

package tokenize

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation bounds do not hold.
const raceEnabled = true
