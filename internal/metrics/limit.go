package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// DefaultMaxSeries is the number of series one scrape keeps, besides the
// canonical ones, by default. The real SGLang exposition in testdata has
// 91 series and the vLLM one (two data-parallel engines) 68: a server
// with a hundred times SGLang's series is still under it.
const DefaultMaxSeries = 10000

// DefaultMaxBytes is the size of exposition one scrape reads by default,
// 400 times the largest real one in testdata (SGLang's, 10,346 bytes).
const DefaultMaxBytes = 4 << 20

// Limits bound what one scrape makes mtrun hold. Zero fields take the
// defaults.
type Limits struct {
	// MaxSeries is the number of series kept per scrape; the canonical
	// series (those mtstats reads) are kept over it.
	MaxSeries int
	// MaxBytes is the number of exposition bytes read per scrape; the
	// rest is not read.
	MaxBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxSeries <= 0 {
		l.MaxSeries = DefaultMaxSeries
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// Scrape is what one scrape read.
type Scrape struct {
	Samples []Sample
	// Dropped counts the series left out over Limits.MaxSeries.
	Dropped int
	// Truncated is set when the exposition was longer than
	// Limits.MaxBytes: what followed was not read.
	Truncated bool
}

// canonicalSet holds every name of canonicalNames.
var canonicalSet = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range canonicalNames {
		for _, n := range c.names {
			m[n] = true
		}
	}
	return m
}()

// canonicalFamily reports whether a # TYPE line's family holds a
// canonical name (a counter's TYPE may omit _total, a histogram's _sum).
func canonicalFamily(name string) bool {
	return canonicalSet[name] || canonicalSet[name+"_total"] || canonicalSet[name+"_sum"]
}

// ParseLimited reads at most l.MaxBytes of the exposition in r and parses
// the lines that fit l.MaxSeries: every canonical series, and the others
// in the order they come until MaxSeries series are kept. HELP lines are
// never kept (no output holds their text), nor TYPE lines past the limit
// but those of canonical families. A line cut by MaxBytes is dropped.
func ParseLimited(r io.Reader, l Limits) (Scrape, error) {
	l = l.withDefaults()
	br := bufio.NewReaderSize(io.LimitReader(r, l.MaxBytes+1), 64<<10)
	var (
		kept   bytes.Buffer
		sc     Scrape
		read   int64
		series int
		types  int
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		read += int64(len(line))
		if read > l.MaxBytes {
			sc.Truncated = true
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return sc, err
		}
		keep := false
		t := bytes.TrimLeft(line, " \t")
		switch {
		case len(bytes.TrimSpace(t)) == 0:
		case t[0] == '#':
			f := strings.Fields(string(t[1:min(len(t), 512)]))
			if len(f) >= 2 && f[0] == "TYPE" && (types < l.MaxSeries || canonicalFamily(f[1])) {
				keep = true
				types++
			}
		default:
			name := t
			if i := bytes.IndexAny(t, "{ \t"); i >= 0 {
				name = t[:i]
			}
			if series < l.MaxSeries || canonicalSet[string(name)] {
				keep = true
				series++
			} else {
				sc.Dropped++
			}
		}
		if keep {
			kept.Write(line)
			if len(line) > 0 && line[len(line)-1] != '\n' {
				kept.WriteByte('\n')
			}
		}
		if err != nil { // io.EOF
			break
		}
	}
	samples, err := Parse(&kept)
	sc.Samples = samples
	return sc, err
}
