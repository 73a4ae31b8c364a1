package cliflag

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
)

// row is one line of a tool's testdata/flags.tsv (see Table).
type row struct {
	tool, name, aliases, typ, def, usage string
	hidden                               bool
}

// readTables reads the flag tables of every tool.
func readTables(t *testing.T) []row {
	t.Helper()
	paths, err := filepath.Glob("../../cmd/*/testdata/flags.tsv")
	if err != nil || len(paths) < 4 {
		t.Fatalf("flag tables: %v, %v (want one per tool)", paths, err)
	}
	var rows []row
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tool := filepath.Base(filepath.Dir(filepath.Dir(p)))
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 6 {
				t.Fatalf("%s:%d: %d fields, want 6 (go test ./cmd/... -run TestFlagTable -update)", p, i+1, len(f))
			}
			rows = append(rows, row{tool: tool, name: f[0], aliases: f[1], typ: f[2], hidden: f[3] == "true", def: f[4], usage: f[5]})
		}
	}
	return rows
}

// hiddenReuse are the hidden old spellings allowed to reuse a name that
// another tool gives another meaning, each with the reason. Every other
// name means one thing in every tool that has it.
var hiddenReuse = map[string]string{
	"mtconvert --model": "vLLM's convert_sharegpt_to_openai.py spelling of --tokenizer (mtrun's --model is the served model, also vLLM's)",
	"mtgen -n":          "old spelling of --num-conversations, deprecated with a note (mtrun's -n is vLLM's --max-num-requests)",
	"mtstats --records": "old bool spelling of --to -, deprecated with a note (mtrun's --records is its records FILE)",
}

// TestVocabulary checks that a flag name (or alias) shared by several
// tools has one type, one usage text and the same aliases in all of them,
// which the constructors of this package give; and that every flag they
// share is one of those constructors'.
func TestVocabulary(t *testing.T) {
	t.Parallel()
	rows := readTables(t)
	byName := map[string][]row{}
	for _, r := range rows {
		for _, n := range append([]string{r.name}, strings.Split(r.aliases, ",")...) {
			if n != "" && hiddenReuse[r.tool+" "+dash(n)] == "" {
				byName[n] = append(byName[n], r)
			}
		}
	}
	shared := map[string]bool{}
	for _, f := range sharedFlags() {
		shared[f.Names()[0]] = true
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rs := byName[n]
		tools := map[string]bool{}
		for _, r := range rs {
			tools[r.tool] = true
		}
		if len(tools) < 2 {
			continue
		}
		first := rs[0]
		for _, r := range rs[1:] {
			if r.tool == first.tool {
				continue
			}
			a, b := first, r
			if a.name != b.name || a.typ != b.typ || a.usage != b.usage || a.aliases != b.aliases || a.hidden != b.hidden {
				t.Errorf("%s means different things:\n  %s: --%s [%s] %s %q\n  %s: --%s [%s] %s %q",
					dash(n), a.tool, a.name, a.aliases, a.typ, a.usage, b.tool, b.name, b.aliases, b.typ, b.usage)
			}
		}
		if !shared[first.name] {
			t.Errorf("%s is in %d tools but is not built by a cliflag constructor", dash(n), len(tools))
		}
	}
	for k := range hiddenReuse {
		tool, flag, _ := strings.Cut(k, " ")
		found := false
		for _, r := range rows {
			found = found || r.tool == tool && r.hidden && r.name == strings.TrimLeft(flag, "-")
		}
		if !found {
			t.Errorf("hiddenReuse names %s, which is not a hidden flag of %s: remove it", flag, tool)
		}
	}
}

// sharedFlags are one flag of each constructor.
func sharedFlags() []interface{ Names() []string } {
	return []interface{ Names() []string }{
		Seed(nil), Tokenizer(nil, ""), Output(nil, ""), Quiet(nil), Strict(nil),
		MaxTurns(nil), ThinkTime(nil, ""), InputFormat(nil), MetricsFile(nil, ""), NoMetrics(nil),
		SLO(nil), Capacity(nil), Config(nil), WarmupPercentages(nil, ""),
	}
}

// TestFlagsDoc keeps the "All flags" section of docs/flags.md, generated
// from every tool's flag table, current (go test -update rewrites it).
func TestFlagsDoc(t *testing.T) {
	t.Parallel()
	const path, heading = "../../docs/flags.md", "## All flags\n"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(doc), heading)
	if !ok {
		t.Fatalf("%s has no %q", path, heading)
	}
	var b strings.Builder
	b.WriteString(head + heading + "\nGenerated from each tool's flag table (`cmd/*/testdata/flags.tsv`); `--help`\nof each tool shows the same, grouped by heading.\n")
	tool := ""
	for _, r := range readTables(t) {
		if r.hidden {
			continue
		}
		if r.tool != tool {
			tool = r.tool
			fmt.Fprintf(&b, "\n### %s\n\n| flag | type | default | meaning |\n|---|---|---|---|\n", tool)
		}
		names := []string{"`" + dash(r.name) + "`"}
		for _, a := range strings.Split(r.aliases, ",") {
			if a != "" {
				names = append(names, "`"+dash(a)+"`")
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", strings.Join(names, ", "), typeNames[r.typ], cell(r.def), cell(strings.ReplaceAll(r.usage, "`", "")))
	}
	clitest.Golden(t, path, []byte(b.String()))
}

// typeNames are the flag types as docs/flags.md names them.
var typeNames = map[string]string{
	"*cli.StringFlag": "string", "*cli.IntFlag": "int", "*cli.Int64Flag": "int64", "*cli.Float64Flag": "float",
	"*cli.BoolFlag": "bool", "*cli.StringSliceFlag": "string, repeatable",
	"*cli.GenericFlag(cliflag.seedValue)": "seed (uint64)", "*cli.GenericFlag(cliflag.durationValue)": "duration",
}

// cell escapes a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
