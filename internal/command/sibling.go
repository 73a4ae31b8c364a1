package command

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Sibling finds the mtkit program name (e.g. "mtstats") that one tool runs
// for another: first beside exe, the running tool's executable (empty:
// os.Executable), then on PATH. The error names both places looked in.
func Sibling(name, exe string) (string, error) {
	if exe == "" {
		exe, _ = os.Executable() // on failure, only PATH is searched
	}
	file := name
	if filepath.Ext(exe) == ".exe" {
		file += ".exe"
	}
	beside := ""
	if exe != "" {
		beside = filepath.Join(filepath.Dir(exe), file)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	where := "on PATH"
	if beside != "" {
		where = fmt.Sprintf("at %s (beside %s) nor on PATH", beside, filepath.Base(exe))
	}
	return "", fmt.Errorf("no %s program found %s: install it with the other mtkit tools (go install github.com/mtkit/mtkit/cmd/%s@latest)", name, where, name)
}
