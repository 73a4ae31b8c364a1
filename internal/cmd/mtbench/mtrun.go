package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/record"
)

// convSpec shapes a synthetic conversation file.
type convSpec struct {
	n         int     // conversations
	turns     int     // user turns each
	userWords int     // words per user message
	wordsMax  int     // when above userWords: words drawn uniformly from userWords to wordsMax
	output    int     // output_tokens of each answer
	thinkMs   float64 // think_time_ms before each turn after the first
	seed      uint64
}

// benchWords are the words user messages are drawn from.
var benchWords = strings.Fields(`the of and to in is was that for on with as by at from this be an are
have it not or which but had were their one all would there been has more when will can if who some into
time only new other could these two may then first any like now my such make over our even most after also
did many before must through back years where much your way well down should because each just those people
how too little state good very world still own see men work long get here between both life being under never
day same another know while last might us great old year off come since against go came right used take three`)

// writeConvs writes a conversation JSONL file.
func writeConvs(path string, s convSpec) error {
	out, err := iox.Create(path, nil)
	if err != nil {
		return err
	}
	w := conv.NewWriter(out)
	rng := rand.New(rand.NewPCG(s.seed, 0x62656e6368))
	var b strings.Builder
	for i := range s.n {
		c := conv.Conversation{ID: fmt.Sprintf("c%06d", i), Messages: make([]conv.Message, 0, 2*s.turns)}
		for t := range s.turns {
			b.Reset()
			fmt.Fprintf(&b, "Conversation %d turn %d:", i, t)
			words := s.userWords
			if s.wordsMax > s.userWords {
				words += rng.IntN(s.wordsMax - s.userWords + 1)
			}
			for range words {
				b.WriteByte(' ')
				b.WriteString(benchWords[rng.IntN(len(benchWords))])
			}
			u := conv.Message{Role: conv.RoleUser, Content: b.String()}
			if t > 0 {
				u.ThinkTimeMs = s.thinkMs
			}
			c.Messages = append(c.Messages, u, conv.Message{Role: conv.RoleAssistant, Content: "ok", OutputTokens: s.output})
		}
		if err := w.Write(&c); err != nil {
			out.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// mtrunRun runs the mtrun binary against url on convs, with records to
// a JSONL file, and returns the process figures and the records.
func (b *bench) mtrunRun(ctx context.Context, url, convs, records string, args []string, o runOpts) (*proc, []*record.Record, error) {
	return b.mtrunWith(ctx, variant{}, url, convs, records, args, o)
}

// mtrunWith is mtrunRun with the mtrun binary of v (this tree's, or the
// --base-bin one), pinned to v.cpus when set.
func (b *bench) mtrunWith(ctx context.Context, v variant, url, convs, records string, args []string, o runOpts) (*proc, []*record.Record, error) {
	bin := v.bin
	if bin == "" {
		if bin = b.bin("mtrun"); bin == "" {
			return nil, nil, errors.New("mtrun binary missing from --bin")
		}
	}
	all := append([]string{"--url", url, "--model", "mtkit-sim", "--records", records, "--quiet"}, args...)
	all = append(all, convs)
	if v.cpus != "" {
		all = append([]string{"-c", v.cpus, bin}, all...)
		bin = "taskset"
	}
	p, err := runProc(ctx, bin, all, o)
	if err != nil {
		return p, nil, err
	}
	recs, err := readRecords(records)
	return p, recs, err
}

// readRecords reads a JSONL records file; a malformed line is an error.
func readRecords(path string) ([]*record.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := record.NewJSONDecoder(f, path)
	var out []*record.Record
	for d.Scan() {
		if err := d.Err(); err != nil {
			return nil, err
		}
		r := *d.Record()
		out = append(out, &r)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// span is the runtime of records as DESIGN.md defines it: max(end) −
// min(start), in seconds, with the number of failed records.
func span(recs []*record.Record) (seconds float64, failed int) {
	if len(recs) == 0 {
		return 0, 0
	}
	lo, hi := recs[0].Start, recs[0].End
	for _, r := range recs {
		if r.Start.Before(lo) {
			lo = r.Start
		}
		if r.End.After(hi) {
			hi = r.End
		}
		if !r.OK() {
			failed++
		}
	}
	return hi.Sub(lo).Seconds(), failed
}
