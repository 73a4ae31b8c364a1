//go:build race

package gen

// raceEnabled: the race detector makes generation about 20 times slower;
// the 10,000-conversation case of TestMessagesApart runs without it.
const raceEnabled = true
