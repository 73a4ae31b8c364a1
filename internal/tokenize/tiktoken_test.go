package tokenize

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/mtkit/mtkit/internal/slowtest"
	"github.com/tiktoken-go/tokenizer"
)

// tiktokenRef is the reference for the built-in encodings: the encoding
// as github.com/tiktoken-go/tokenizer v0.7.0 runs it (its own regexp2 split
// and merge loop), with special tokens matched first.
type tiktokenRef struct {
	codec   tokenizer.Codec
	special *matcher
	ids     []int
}

var (
	tiktokenRefsOnce sync.Once
	tiktokenRefs     map[string]*tiktokenRef
)

// tiktokenRefFor returns the reference of a built-in encoding.
func tiktokenRefFor(t testing.TB, name string) *tiktokenRef {
	t.Helper()
	tiktokenRefsOnce.Do(func() {
		tiktokenRefs = map[string]*tiktokenRef{}
		for _, name := range builtinModels {
			c, err := tokenizer.Get(tokenizer.Encoding(name))
			if err != nil {
				continue
			}
			r := &tiktokenRef{codec: c}
			var toks []string
			for s, id := range builtinSpecials[name] {
				toks = append(toks, s)
				r.ids = append(r.ids, id)
			}
			r.special = newMatcher(toks)
			tiktokenRefs[name] = r
		}
	})
	r, ok := tiktokenRefs[name]
	if !ok {
		t.Fatalf("tiktoken-go has no encoding %q", name)
	}
	return r
}

// segments calls fn for each run of ordinary text (special = -1) and each
// special token (special = its id) of text, in order.
func (r *tiktokenRef) segments(text string, fn func(seg string, special int)) {
	pos := 0
	for pos < len(text) {
		s, e, tok, ok := r.special.find(text, pos)
		if !ok {
			break
		}
		if s > pos {
			fn(text[pos:s], -1)
		}
		fn("", r.ids[tok])
		pos = e
	}
	if pos < len(text) {
		fn(text[pos:], -1)
	}
}

// encode returns the reference ids of text.
func (r *tiktokenRef) encode(t testing.TB, text string) []int {
	t.Helper()
	var ids []int
	r.segments(text, func(seg string, special int) {
		if special >= 0 {
			ids = append(ids, special)
			return
		}
		got, _, err := r.codec.Encode(seg)
		if err != nil {
			t.Fatalf("tiktoken-go: %v", err)
		}
		for _, id := range got {
			ids = append(ids, int(id))
		}
	})
	return ids
}

// count returns the reference count of text.
func (r *tiktokenRef) count(t testing.TB, text string) int {
	t.Helper()
	n := 0
	r.segments(text, func(seg string, special int) {
		if special >= 0 {
			n++
			return
		}
		c, err := r.codec.Count(seg)
		if err != nil {
			t.Fatalf("tiktoken-go: %v", err)
		}
		n += c
	})
	return n
}

// checkTiktoken compares Encode and Count of every built-in encoding with
// tiktoken-go on text.
func checkTiktoken(t *testing.T, text string) {
	t.Helper()
	for _, name := range builtinModels {
		tok, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		ref := tiktokenRefFor(t, name)
		got, want := tok.Encode(text), ref.encode(t, text)
		if !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: Encode(%.200q) differs from tiktoken-go at id %d:\n got %v\nwant %v",
				name, text, i, got[i:min(len(got), i+20)], want[i:min(len(want), i+20)])
		}
		if n, wantN := tok.Count(text), ref.count(t, text); n != wantN || n != len(want) {
			t.Fatalf("%s: Count(%.200q) = %d, tiktoken-go %d, len(Encode) %d", name, text, n, wantN, len(want))
		}
	}
}

// tiktokenSeeds are strings aimed at the corners of the split patterns:
// case mixes around the o200k letter classes, marks, contractions,
// number runs, punctuation with slashes and newlines, whitespace runs.
var tiktokenSeeds = []string{
	"HTTPServer iPhone McDonald'S DON'T don'T x'LL 'Re 've 'm 'd 's", "ABCdef ABC'def abcDEF'S", "ǅungla ǈudevit ǲ Ǳ ǳ",
	"ʰʲʷ modifier letters ʰA Aʰ aʰB", "ƻƼ other letters", "a\u0301b\u0301C\u0301 \u0301\u0301x \u0301A", "\u0301'S \u0301's",
	"e\u0301E\u0301e\u0301", "Ä\u0308Ö", "x\u0308\u0308\u0308Y", "中文English混合Text", "日本語のテキストABC", "κόσμε ΚΌΣΜΕ",
	"12345 1234567 ١٢٣٤٥ ½½½½ ²³⁴⁵ Ⅻ Ⅻ", "a1b22c333d4444", "path/to/file.txt //comment /* x */\n/\r\n",
	"!!!\n\n  ???\r\n///\n", " /x / y //\n\n", "\t\t\n \n  \n\u00a0\u00a0\n", "  \u3000\u3000x  \u2003y", "   ", "\n \n \n",
	"x  \n", "x \t y", "a\r\n\r\nb", "'''' ''s '' 'S'", "'", "'x", "Rock'n'roll", "O'NEIL'S", "ΑΒΓ'S αβγ's",
	"\u0130stanbul \u0131 \u212a\u212b 'K 'ſ 'ſt", "ﬁnal ﬃ", "😀😀 👍🏽👍🏽 🇫🇷\u200d", "a\u200bb\u200cc\u200dd", "\u00ad\u00adX",
	"<|endoftext|> <|endofprompt|><|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>", "<|endoftext", "\x00\x01\x7f",
	"\xff\xfeinvalid\xc3 \xe4\xb8 \xf0\x9f", strings.Repeat("a", 200), strings.Repeat("ab", 150),
	strings.Repeat("中", 100) + strings.Repeat("文字", 80), strings.Repeat("😀", 60), strings.Repeat("\u0301", 120),
	strings.Repeat("AB", 70) + "cd", strings.Repeat(" ", 130) + "x", strings.Repeat("=", 150), strings.Repeat("9", 130),
}

// FuzzBuiltinTiktoken checks that the built-in encodings give exactly the
// ids and counts of tiktoken-go v0.7.0 (the previous implementation).
func FuzzBuiltinTiktoken(f *testing.F) {
	for _, s := range goldenTexts() {
		f.Add(s)
	}
	for _, s := range tiktokenSeeds {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 50 {
		f.Add(randomText(r))
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkTiktoken(t, s)
	})
}

// mixedCorpus returns about n bytes of text in many scripts, with emoji,
// marks, numbers, code and long runs without spaces (CJK sentences, long
// letter and digit runs), for comparisons with tiktoken-go.
func mixedCorpus(n int) string {
	r := rand.New(rand.NewPCG(42, 1))
	paras := []string{
		"我在2024年5月1日买了3个苹果。今天天气很好，我们去公园散步吧！人工智能正在改变世界的方方面面，从医疗到教育，从交通到金融。",
		"日本語のテキスト、ひらがなとカタカナ。東京タワーは1958年に完成しました。ＡＢＣ１２３全角文字も。",
		"한국어 텍스트입니다. 서울특별시는 대한민국의 수도이다.", "Русский текст, ПРОПИСНЫЕ буквы и цифры 12345.",
		"Ελληνικά γράμματα ΚΕΦΑΛΑΙΑ. العربية من اليمين ١٢٣. עברית מימין לשמאל. हिन्दी पाठ। ภาษาไทยไม่มีช่องว่าง",
		"emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️ 🤖🤖🤖", "Tiếng Việt có dấu: Nguyễn, Đặng. cafe\u0301 e\u0301e\u0301",
		"func main() {\n\tfmt.Println(\"héllo, 世界\")\n}\n", "It's DON'T we'll THEY'RE I'd You've iPhone HTTPServer",
	}
	var b strings.Builder
	for b.Len() < n {
		switch k := r.IntN(10); {
		case k < 7:
			b.WriteString(paras[r.IntN(len(paras))])
		case k == 7:
			b.WriteString(randomText(r))
		case k == 8:
			// A long run without spaces: heap merges.
			p := []rune(paras[r.IntN(2)])
			for range 3 + r.IntN(5) {
				b.WriteString(string(p[:len(p)-1]))
			}
		default:
			b.WriteString(strings.Repeat(string(rune('a'+r.IntN(3))), 50+r.IntN(300)))
		}
		b.WriteString([]string{" ", "\n", "\n\n", "  ", ""}[r.IntN(5)])
	}
	return b.String()
}

// TestBuiltinCorpus compares the built-in encodings with tiktoken-go on
// Newton's Opticks (shipped with Go) and on a mixed-script corpus, whole
// and line by line. The default suite takes the first 48 KB of each and
// 500 lines; the slow step (slowtest) the whole texts (550 KB and 400 KB)
// and 2000 lines, minutes under -race: tiktoken-go's regexp2 split is the
// cost.
func TestBuiltinCorpus(t *testing.T) {
	t.Parallel()
	//lint:ignore SA1019 tests run with the toolchain, whose GOROOT holds the file
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	size, lines := 48<<10, 500
	if slowtest.Enabled() {
		size, lines = len(data), 2000
	}
	for _, tc := range []struct{ name, text string }{
		{"opticks", string(data)},
		{"mixed", mixedCorpus(400 << 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text := tc.text
			if len(text) > size {
				text = text[:size]
			}
			checkTiktoken(t, text)
			// Line by line too: many short calls, other piece boundaries.
			for _, line := range strings.SplitAfter(tc.text, "\n")[:lines] {
				checkTiktoken(t, line)
			}
		})
	}
}

// TestBuiltinRandom compares the built-in encodings with tiktoken-go on
// random mixed-script strings.
func TestBuiltinRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		checkTiktoken(t, randomText(r))
	}
}

// TestBuiltinPatterns checks that the split patterns this package runs by
// hand are the ones tiktoken-go compiles.
func TestBuiltinPatterns(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"o200k_base": patternO200k, "cl100k_base": patternCl100k} {
		c, err := tokenizer.Get(tokenizer.Encoding(name))
		if err != nil {
			t.Fatal(err)
		}
		v := reflect.ValueOf(c).Elem().FieldByName("splitRegexp")
		if !v.IsValid() || v.IsNil() {
			t.Fatalf("%s: tiktoken-go codec has no splitRegexp field", name)
		}
		if got := v.Elem().FieldByName("pattern").String(); got != want {
			t.Errorf("%s: tiktoken-go pattern\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestRuneClasses checks the o200k class table against Go's Unicode
// tables for every rune and against regexp2's classes for a sample.
func TestRuneClasses(t *testing.T) {
	t.Parallel()
	f := newO200kSplit()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := f.class(r), classOf(r); got != want {
			t.Fatalf("class(%U) = %#x, want %#x", r, got, want)
		}
	}
	classes := []struct {
		bit uint8
		re  *regexp2.Regexp
	}{
		{clsL, regexp2.MustCompile(`^\p{L}$`, regexp2.None)},
		{clsN, regexp2.MustCompile(`^\p{N}$`, regexp2.None)},
		{clsS, regexp2.MustCompile(`^\s$`, regexp2.None)},
		{clsU, regexp2.MustCompile(`^[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]$`, regexp2.None)},
		{clsW, regexp2.MustCompile(`^[\p{Ll}\p{Lm}\p{Lo}\p{M}]$`, regexp2.None)},
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r > 0x3000 && r%17 != 0 || !utf8.ValidRune(r) {
			continue
		}
		for _, c := range classes {
			ok, err := c.re.MatchString(string(r))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.class(r)&c.bit != 0; got != ok {
				t.Errorf("%U: class bit %#x = %v, regexp2 %s says %v", r, c.bit, got, c.re, ok)
			}
		}
	}
}

// TestContractionFold checks the case-insensitive contractions on every
// rune that case-folds or lowercases to one of their letters.
func TestContractionFold(t *testing.T) {
	t.Parallel()
	re := regexp2.MustCompile(`^(?i:'s|'t|'re|'ve|'m|'ll|'d)`, regexp2.None)
	var runes []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		l := unicode.ToLower(r)
		if strings.ContainsRune("strvemld", l) || strings.ContainsRune("strvemld", unicode.SimpleFold(r)) {
			runes = append(runes, r)
		}
	}
	for _, a := range runes {
		for _, b := range append(slices.Clone(runes), 'x') {
			s := "'" + string(a) + string(b)
			m, err := re.FindStringMatch(s)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if m != nil {
				want = len(string([]rune(s)[:m.Length]))
			}
			if got := contraction(s, 0); got != want {
				t.Errorf("contraction(%q) = %d, regexp2 %d", s, got, want)
			}
		}
	}
}

// FuzzMergeRanks checks that the heap and in-place rank merges agree on
// the o200k_base ranks.
func FuzzMergeRanks(f *testing.F) {
	tok, err := Load("o200k_base")
	if err != nil {
		f.Fatal(err)
	}
	t := tok.(*bpe)
	f.Add("aaaaaaab abababab")
	f.Add("internationalization")
	f.Add("中文测试你好世界")
	f.Add(strings.Repeat("\u0301", 40))
	f.Fuzz(func(tt *testing.T, s string) {
		if len(s) > smallPiece || len(s) < 2 {
			return
		}
		syms := make([]int32, len(s))
		for i := 0; i < len(s); i++ {
			syms[i] = t.byteID[s[i]]
		}
		a := mergeRanksSmall(t.vocab, s, slices.Clone(syms))
		b := mergeRanksHeap(t.vocab, s, slices.Clone(syms))
		if !slices.Equal(a, b) {
			tt.Fatalf("%q: small %v, heap %v", s, a, b)
		}
		if got := t.Decode(intIDs(a)); got != s {
			tt.Fatalf("%q: merged ids decode to %q", s, got)
		}
	})
}

func intIDs(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
