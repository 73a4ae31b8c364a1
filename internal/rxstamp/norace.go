//go:build !race

package rxstamp

const raceEnabled = false
