package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
)

// vllmPython runs vLLM's converter: Debian's interpreter, with the
// Debian packages python3-pandas and python3-tqdm (scripts/fixtures.sh).
const vllmPython = "/usr/bin/python3"

// vllmPatch is one documented change made to a copy of vLLM's converter
// before it runs (scripts/vllm/README.md); the file itself is never
// edited.
type vllmPatch struct {
	name, old, new string
}

// vllmPatches: the one-line fix without which the converter drops every
// ASCII conversation (content_is_valid keeps only content that has
// non-ASCII characters, then asserts that something is left), and an
// import guard so that the mode without --model runs without
// transformers, which Debian does not package.
var vllmPatches = []vllmPatch{
	{"ascii-fix", "    return has_non_english_chars(content)\n", "    return not has_non_english_chars(content)\n"},
	{"optional-transformers", "from transformers import AutoTokenizer  # type: ignore\n",
		"try:\n    from transformers import AutoTokenizer  # type: ignore\nexcept ImportError:  # mtbench: not packaged by Debian; only --model needs it\n    AutoTokenizer = object  # type: ignore\n"},
}

// patchVLLM applies vllmPatches to src; each must match exactly once, so
// a different upstream version fails loudly instead of being timed
// unpatched.
func patchVLLM(src string) (string, error) {
	for _, p := range vllmPatches {
		if n := strings.Count(src, p.old); n != 1 {
			return "", fmt.Errorf("vLLM converter patch %s: the line %q occurs %d times, want 1 (a different version of the file?)", p.name, strings.TrimSpace(p.old), n)
		}
		src = strings.Replace(src, p.old, p.new, 1)
	}
	return src, nil
}

// defaultVLLMConvert is where scripts/fixtures.sh expects vLLM's
// converter: $MTKIT_FIXTURES/vllm, else
// ${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures/vllm.
func defaultVLLMConvert() string {
	return filepath.Join(clitest.FixturesDir(), "vllm", "convert_sharegpt_to_openai.py")
}

// vllmReady returns the path of the patched converter in dir, or why it
// cannot run.
func (b *bench) vllmReady(ctx context.Context, dir string) (string, error) {
	if b.vllmConvert == "" {
		return "", fmt.Errorf("no --vllm-convert")
	}
	src, err := os.ReadFile(b.vllmConvert)
	if err != nil {
		return "", fmt.Errorf("%w (scripts/vllm/README.md says where it comes from)", err)
	}
	patched, err := patchVLLM(string(src))
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "convert_sharegpt_to_openai.patched.py")
	if err := os.WriteFile(out, []byte(patched), 0o644); err != nil {
		return "", err
	}
	if _, err := runProc(ctx, vllmPython, []string{"-c", "import pandas, tqdm"}, runOpts{}); err != nil {
		return "", fmt.Errorf("%s lacks pandas or tqdm (apt-get install python3-pandas python3-tqdm): %w", vllmPython, err)
	}
	return out, nil
}

var (
	// mtconvertWritten matches mtconvert's summary line
	// "conversations  N after merging parts: W written, D dropped".
	mtconvertWritten = regexp.MustCompile(`(?m)^conversations\s+[0-9,]+ after merging parts: ([0-9,]+) written`)
	// vllmWritten matches the converter's
	// "Total conversations converted (after filtering): N".
	vllmWritten = regexp.MustCompile(`Total conversations converted \(after filtering\): ([0-9,]+)`)
)

// convertedCount extracts the number of written conversations from a
// converter's output with re.
func convertedCount(re *regexp.Regexp, out, tool string) (int, error) {
	m := re.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("%s: no count of written conversations in its output: %s", tool, tail(out, 400))
	}
	return strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
}

// toolMtconvert converts a generated ShareGPT list (~300 MB; 3 MB in
// smoke mode, ASCII text) to conversation JSONL with mtconvert, with and
// without a tokenizer, and with vLLM's converter side by side,
// interleaved, checking that both write the same number of
// conversations.
func (b *bench) toolMtconvert(ctx context.Context, dir string) error {
	const sec = "tools"
	const (
		mtName    = "mtconvert ShareGPT → JSONL"
		mtTokName = "mtconvert --tokenizer ShareGPT → JSONL"
		vName     = "vLLM convert_sharegpt_to_openai.py (ASCII fix)"
		vTokName  = "vLLM convert_sharegpt_to_openai.py --model (tokenizer)"
		ratio     = "mtconvert/vLLM MB/s, 2 cores"
		ratioTok  = "mtconvert/vLLM MB/s with tokenizer, 2 cores"
	)
	bin := b.bin("mtconvert")
	if bin == "" {
		b.figs.na(sec, mtName, "MB/s", atLeast(100), "tool missing")
		b.figs.na(sec, ratio, "ratio", atLeast(4), "mtconvert missing")
		return nil
	}
	in := filepath.Join(dir, "sharegpt.json")
	size, err := writeShareGPT(in, pick[int64](b, 3e6, 300e6))
	if err != nil {
		return err
	}
	defer os.Remove(in)
	mb := float64(size) / 1e6
	tok := b.tokenizer
	if tok == "" {
		tok = "o200k_base" // built in
	}
	vllm, vErr := b.vllmReady(ctx, dir)
	if vErr != nil {
		b.logf("vLLM converter figures n/a: %v", vErr)
		b.figs.na(sec, vName, "MB/s", nil, vErr.Error())
		b.figs.na(sec, ratio, "ratio", atLeast(4), "vLLM's converter not runnable: "+vErr.Error())
	}
	noTransformers := "vLLM's tokenizer mode needs transformers (AutoTokenizer), which Debian does not package and PyPI is not reachable"
	b.figs.na(sec, vTokName, "MB/s", nil, noTransformers)
	b.figs.na(sec, ratioTok, "ratio", atLeast(4), noTransformers)
	for run := range b.runs {
		var mtRate, vRate float64
		var mtConvs, vConvs int
		steps := []func() error{
			func() error {
				p, err := runProc(ctx, bin, []string{"-o", os.DevNull, in}, runOpts{})
				if err != nil {
					return err
				}
				if mtConvs, err = convertedCount(mtconvertWritten, p.Stderr, "mtconvert"); err != nil {
					return err
				}
				mtRate = mb / p.Wall.Seconds()
				b.logf("mtconvert: %.0f MB in %v (CPU %v, max RSS %.0f MB), %d conversations", mb, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond), float64(p.MaxRSS)/1e6, mtConvs)
				b.figs.add(sec, mtName, "MB/s", atLeast(100), mtRate)
				b.figs.add(sec, mtName+": max RSS", "MB", atMost(64), float64(p.MaxRSS)/1e6)
				return nil
			},
			func() error {
				p, err := runProc(ctx, bin, []string{"-q", "--tokenizer", tok, "-o", os.DevNull, in}, runOpts{})
				if err != nil {
					return err
				}
				b.logf("mtconvert --tokenizer: %.0f MB in %v (CPU %v, max RSS %.0f MB)", mb, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond), float64(p.MaxRSS)/1e6)
				b.figs.add(sec, mtTokName, "MB/s", nil, mb/p.Wall.Seconds())
				b.figs.add(sec, mtTokName+": max RSS", "MB", atMost(64), float64(p.MaxRSS)/1e6)
				return nil
			},
		}
		if vErr == nil {
			v := func() error {
				p, err := runProc(ctx, vllmPython, []string{vllm, in, os.DevNull}, runOpts{stdout: filepath.Join(dir, "vllm.out")})
				if err != nil {
					return err
				}
				out, err := os.ReadFile(filepath.Join(dir, "vllm.out"))
				if err != nil {
					return err
				}
				if vConvs, err = convertedCount(vllmWritten, string(out), "vLLM converter"); err != nil {
					return err
				}
				vRate = mb / p.Wall.Seconds()
				b.logf("vLLM converter: %.0f MB in %v (CPU %v, max RSS %.0f MB), %d conversations", mb, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond), float64(p.MaxRSS)/1e6, vConvs)
				b.figs.add(sec, vName, "MB/s", nil, vRate)
				b.figs.add(sec, vName+": max RSS", "MB", nil, float64(p.MaxRSS)/1e6)
				return nil
			}
			if run%2 == 1 {
				steps = append([]func() error{v}, steps...)
			} else {
				steps = append(steps, v)
			}
		}
		for _, f := range steps {
			if err := f(); err != nil {
				return err
			}
		}
		if vErr == nil {
			if mtConvs != vConvs {
				return fmt.Errorf("mtconvert wrote %d conversations, vLLM's converter %d, from the same %s", mtConvs, vConvs, in)
			}
			b.figs.add(sec, ratio, "ratio", atLeast(4), mtRate/vRate)
		}
	}
	note := fmt.Sprintf("a generated ShareGPT JSON list of %.0f MB (ASCII English, ids sgN_0, 2-8 messages), output to /dev/null, the runs of the tools interleaved", mb)
	b.figs.note(sec, mtName, note+"; mtconvert default filters, and --tokenizer "+filepath.Base(tok)+" for the tokenizer figures")
	if vErr == nil {
		b.figs.note(sec, vName, fmt.Sprintf("vLLM's benchmarks/multi_turn/convert_sharegpt_to_openai.py run by %s (Debian's pandas and tqdm) with the patches of scripts/vllm/README.md; both tools wrote the same number of conversations", vllmPython))
	}
	return nil
}
