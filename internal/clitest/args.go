package clitest

import (
	"bytes"
	"os"
	"slices"
)

// Subst returns a copy of args with each placeholder replaced by value
// (such as a path in the test's temporary directory).
func Subst(args []string, placeholder, value string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == placeholder {
			out[i] = value
		}
	}
	return out
}

// Lines returns the number of lines of the file at path, or -1 if there
// is no such file (a run that fails with a usage error must not create
// its outputs).
func Lines(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return bytes.Count(data, []byte("\n"))
}
