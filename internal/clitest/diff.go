package clitest

import (
	"bytes"
	"fmt"
	"strings"
)

const (
	// contextLines is the number of unchanged lines shown around a change.
	contextLines = 3
	// maxCells bounds the table of the longest-common-subsequence search;
	// a larger differing region is shown as all old lines, then all new.
	maxCells = 1 << 22
	// maxDiffLines bounds the lines of a diff; the rest is counted.
	maxDiffLines = 400
)

// edit is one line of a diff: op is ' ' (kept), '-' (only in the old
// text) or '+' (only in the new text); line keeps its newline, if any.
type edit struct {
	op   byte
	line string
}

// Diff returns a unified diff (3 lines of context) from oldText to newText, named
// oldName and newName in its header. A last line without a newline is
// marked as in diff(1).
func Diff(oldName string, oldText []byte, newName string, newText []byte) string {
	es := edits(splitLines(oldText), splitLines(newText))
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	written := 0
	for k := 0; k < len(es); {
		if es[k].op == ' ' {
			k++
			continue
		}
		// Extend the hunk over changes separated by at most
		// 2*contextLines kept lines.
		end := k
		for {
			for end < len(es) && es[end].op != ' ' {
				end++
			}
			next := end
			for next < len(es) && es[next].op == ' ' {
				next++
			}
			if next == len(es) || next-end > 2*contextLines {
				break
			}
			end = next
		}
		start, stop := max(0, k-contextLines), min(len(es), end+contextLines)
		oldLine, newLine := count(es[:start])
		oldN, newN := count(es[start:stop])
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(oldLine, oldN), hunkRange(newLine, newN))
		for _, e := range es[start:stop] {
			if written == maxDiffLines {
				sb.WriteString("... (diff truncated)\n")
				return sb.String()
			}
			written++
			sb.WriteByte(e.op)
			sb.WriteString(e.line)
			if !strings.HasSuffix(e.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = stop
	}
	return sb.String()
}

// hunkRange formats the range of a hunk header: the first line (1-based)
// and the number of lines, or the line before an empty range.
func hunkRange(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

// count returns the number of old and new lines in es.
func count(es []edit) (oldN, newN int) {
	for _, e := range es {
		if e.op != '+' {
			oldN++
		}
		if e.op != '-' {
			newN++
		}
	}
	return oldN, newN
}

// splitLines splits b after each newline; the last line may lack one.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// edits returns a shortest edit script from a to b: the common prefix and
// suffix are kept, the rest goes through a longest common subsequence.
func edits(a, b []string) []edit {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a[:p] {
		out = append(out, edit{' ', l})
	}
	out = append(out, lcsEdits(a[p:len(a)-s], b[p:len(b)-s])...)
	for _, l := range a[len(a)-s:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// lcsEdits is edits without the prefix and suffix shortcut.
func lcsEdits(a, b []string) []edit {
	var out []edit
	n, m := len(a), len(b)
	if n*m > maxCells {
		for _, l := range a {
			out = append(out, edit{'-', l})
		}
		for _, l := range b {
			out = append(out, edit{'+', l})
		}
		return out
	}
	// lcs[i*(m+1)+j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int { return i*(m+1) + j }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[at(i, j)] = lcs[at(i+1, j+1)] + 1
			} else {
				lcs[at(i, j)] = max(lcs[at(i+1, j)], lcs[at(i, j+1)])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, edit{' ', a[i]})
			i++
			j++
		case lcs[at(i+1, j)] >= lcs[at(i, j+1)]:
			out = append(out, edit{'-', a[i]})
			i++
		default:
			out = append(out, edit{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, edit{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, edit{'+', b[j]})
	}
	return out
}
