package clitest

import (
	"os"
	"path/filepath"
)

// FixturesDir is where scripts/fixtures.sh installs the npm test fixtures:
// $MTKIT_FIXTURES, else $MTKIT_CACHE/fixtures, else ~/.cache/mtkit/fixtures.
func FixturesDir() string {
	if d := os.Getenv("MTKIT_FIXTURES"); d != "" {
		return d
	}
	cache := os.Getenv("MTKIT_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "mtkit")
	}
	return filepath.Join(cache, "fixtures")
}
