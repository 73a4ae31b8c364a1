package convert

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
)

const quirksFile = "testdata/sharegpt_quirks.jsonl"

// quirkSource returns the source values of each record of the quirks file
// by base id, decoded with encoding/json.
func quirkSource(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(quirksFile)
	if err != nil {
		t.Fatal(err)
	}
	src := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			ID            string
			Conversations []struct{ From, Value string }
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		base, _ := splitPart(rec.ID)
		for _, c := range rec.Conversations {
			src[base] = append(src[base], c.Value)
		}
	}
	return src
}

func TestQuirks(t *testing.T) {
	t.Parallel()
	src := quirkSource(t)
	byID := func(cs []conv.Conversation) map[string]conv.Conversation {
		m := map[string]conv.Conversation{}
		for _, c := range cs {
			base, _ := splitPart(c.ID)
			m[base] = c
		}
		return m
	}
	roles := func(c conv.Conversation) string {
		var b strings.Builder
		for _, m := range c.Messages {
			b.WriteByte(m.Role[0])
		}
		return b.String()
	}
	convs, sum, _, err := convertFiles(t, Options{Inputs: []string{quirksFile}, Dedupe: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(convs)
	t.Run("counts", func(t *testing.T) {
		t.Parallel()
		if sum.Records != 13 || sum.Malformed != 0 || sum.Written != 10 || sum.Dropped[ReasonNoUser] != 3 {
			t.Errorf("records %d malformed %d written %d dropped %v", sum.Records, sum.Malformed, sum.Written, sum.Dropped)
		}
	})
	t.Run("gpt-only conversations are dropped as no_user_message", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{"vH636g3", "j1Zm8PL", "3D3oQC0"} {
			if _, ok := got[id]; ok {
				t.Errorf("%s written", id)
			}
		}
	})
	t.Run("part suffixes, high part numbers", func(t *testing.T) {
		t.Parallel()
		// A part joined to no other part keeps its source id.
		c, ok := got["FQi5DlJ"]
		if !ok || c.ID != "FQi5DlJ_57" {
			t.Fatalf("FQi5DlJ_57 not written under its own id; got %v", slices.Collect(func(yield func(string) bool) {
				for id := range got {
					yield(id)
				}
			}))
		}
		if p, ok := c.Meta["parts"]; ok {
			t.Errorf("parts = %v, want none", p)
		}
		if c.Meta["source"] != "sharegpt" {
			t.Errorf("source = %v", c.Meta["source"])
		}
	})
	t.Run("starts with gpt", func(t *testing.T) {
		t.Parallel()
		for id, want := range map[string]string{"6yOyum9": "uaua", "7oCNiUu": "uaua", "8Ei88kb": "ua", "LytoRNh": "uaua"} {
			if r := roles(got[id]); !strings.HasPrefix(r, want) {
				t.Errorf("%s roles %s, want prefix %s", id, r, want)
			}
		}
		if sum.Removed.LeadingAssistant != 7 {
			t.Errorf("leading assistant removed = %d, want 7", sum.Removed.LeadingAssistant)
		}
	})
	t.Run("system first", func(t *testing.T) {
		t.Parallel()
		if r := roles(got["ufsbA0x"]); r != "sua" {
			t.Errorf("roles %s, want sua", r)
		}
	})
	t.Run("empty values and repeated roles", func(t *testing.T) {
		t.Parallel()
		// GOuD5dI: human, gpt, human, human(""), gpt; 8Ei88kb: gpt, human(""), gpt, human, gpt.
		if r := roles(got["GOuD5dI"]); r != "uaua" {
			t.Errorf("GOuD5dI roles %s, want uaua", r)
		}
		if sum.Removed.Empty != 2 {
			t.Errorf("empty removed = %d, want 2", sum.Removed.Empty)
		}
		for _, c := range convs {
			for i := 1; i < len(c.Messages); i++ {
				if c.Messages[i].Role == c.Messages[i-1].Role {
					t.Errorf("%s: messages %d and %d share role %s", c.ID, i-1, i, c.Messages[i].Role)
				}
			}
		}
	})
	t.Run("text kept byte for byte (HTML, <br>, Chinese)", func(t *testing.T) {
		t.Parallel()
		n := 0
		for _, c := range convs {
			for _, m := range c.Messages {
				if base, _ := splitPart(c.ID); !slices.Contains(src[base], m.Content) {
					t.Errorf("%s: message %.40q is not a source value", c.ID, m.Content)
				}
				if strings.Contains(m.Content, "<br>") || !isASCII(m.Content) {
					n++
				}
			}
		}
		if n == 0 {
			t.Error("no message with <br> or non-ASCII text written")
		}
	})
	t.Run("keep-empty merges the empty repeat", func(t *testing.T) {
		t.Parallel()
		convs, sum, _, err := convertFiles(t, Options{Inputs: []string{quirksFile}, KeepEmpty: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := roles(byID(convs)["GOuD5dI"]); r != "uaua" || sum.Removed.Merged < 1 {
			t.Errorf("GOuD5dI roles %s, merged %d", r, sum.Removed.Merged)
		}
	})
	t.Run("drop system", func(t *testing.T) {
		t.Parallel()
		convs, sum, _, err := convertFiles(t, Options{Inputs: []string{quirksFile}, DropSystem: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := roles(byID(convs)["ufsbA0x"]); r != "ua" || sum.Removed.System != 1 || sum.System != 0 {
			t.Errorf("ufsbA0x roles %s, system removed %d written %d", r, sum.Removed.System, sum.System)
		}
	})
	t.Run("ascii-only drops the conversations with non-ASCII text", func(t *testing.T) {
		t.Parallel()
		convs, sum, _, err := convertFiles(t, Options{Inputs: []string{quirksFile}, ASCIIOnly: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 7oCNiUu, GOuD5dI, mvYw51D and jmmj61W have non-ASCII text.
		if sum.Dropped[ReasonNonASCII] != 4 || len(convs) != 6 {
			t.Errorf("non_ascii dropped %d, written %d", sum.Dropped[ReasonNonASCII], len(convs))
		}
		for _, c := range convs {
			for _, m := range c.Messages {
				if !isASCII(m.Content) {
					t.Errorf("%s kept with non-ASCII text", c.ID)
				}
			}
		}
	})
	t.Run("alternation drop", func(t *testing.T) {
		t.Parallel()
		convs, sum, _, err := convertFiles(t, Options{Inputs: []string{quirksFile}, Alternation: AlternationDrop}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Only the conversations that start with the user (or system then
		// user) and alternate survive.
		want := []string{"3IY89pA_0", "GOuD5dI_0", "ufsbA0x_0", "mvYw51D_0", "jmmj61W_0"}
		var ids []string
		for _, c := range convs {
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, want) || sum.Dropped[ReasonAlternation] != 5 {
			t.Errorf("written %v (want %v), alternation drops %d", ids, want, sum.Dropped[ReasonAlternation])
		}
	})
}
