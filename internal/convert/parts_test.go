package convert

import (
	"strings"
	"testing"
)

// TestConversationSystemField: a conversation-level "system" or
// "system_prompt" becomes the leading system message in every parts mode
// (it was ignored); --system drop still drops it.
func TestConversationSystemField(t *testing.T) {
	t.Parallel()
	llama := `{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a"}],"system":"be brief","tools":""}` + "\n"
	parts := `{"id":"p_0","system":"S","conversations":[{"from":"human","value":"q0"},{"from":"gpt","value":"a0"}]}` + "\n" +
		`{"id":"p_2","system":"S","conversations":[{"from":"human","value":"q1"}]}` + "\n"
	for _, tc := range []struct {
		name string
		opts Options
		in   string
		want []string
	}{
		{"llama-factory record", Options{}, llama, []string{"in.jsonl:1: s:be brief u:q a:a"}},
		{"parts none", Options{Parts: PartsNone}, llama, []string{"in.jsonl:1: s:be brief u:q a:a"}},
		{"parts all", Options{Parts: PartsAll}, llama, []string{"in.jsonl:1: s:be brief u:q a:a"}},
		{"system drop", Options{DropSystem: true}, llama, []string{"in.jsonl:1: u:q a:a"}},
		{"system_prompt", Options{}, `{"id":"o","system_prompt":"hermes","conversations":[{"from":"human","value":"q"}]}` + "\n", []string{"o: s:hermes u:q"}},
		{"system wins over system_prompt", Options{}, `{"id":"o","system":"a","system_prompt":"b","conversations":[{"from":"human","value":"q"}]}` + "\n", []string{"o: s:a u:q"}},
		{"null system", Options{}, `{"id":"o","system":null,"system_prompt":null,"conversations":[{"from":"human","value":"q"}]}` + "\n", []string{"o: u:q"}},
		{"same as the first message: not repeated", Options{}, `{"id":"o","system":"s","conversations":[{"from":"system","value":"s"},{"from":"human","value":"q"}]}` + "\n", []string{"o: s:s u:q"}},
		{"other first system message: merged by repair", Options{}, `{"id":"o","system":"s","conversations":[{"from":"system","value":"t"},{"from":"human","value":"q"}]}` + "\n", []string{"o: s:s\n\nt u:q"}},
		{"openai record", Options{}, `{"id":"o","system":"s","messages":[{"role":"user","content":"q"}]}` + "\n", []string{"o: s:s u:q"}},
		{"merged parts: once", Options{}, parts, []string{"p: s:S u:q0 a:a0 u:q1"}},
		{"parts none: every part", Options{Parts: PartsNone}, parts, []string{"p_0: s:S u:q0 a:a0", "p_2: s:S u:q1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkConvert(t, tc.opts, tc.in, tc.want, nil)
		})
	}
}

// TestPartContinuation covers the continuation rule on made-up ids.
func TestPartContinuation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("long answer ", 20)
	for _, tc := range []struct {
		name                       string
		opts                       Options
		in                         string
		want                       []string
		joined, overlaps, separate int
		dropped                    map[Reason]int
	}{
		{
			name: "identity_N numbering stays separate",
			in:   sg("identity_0", "human", "q", "gpt", "a") + sg("identity_1", "human", "q2", "gpt", "a2"),
			want: []string{"identity_0: u:q a:a", "identity_1: u:q2 a:a2"}, separate: 1,
		},
		{
			name: "repeated boundary message removed",
			in:   sg("v_0", "human", "q", "gpt", long) + sg("v_1", "gpt", long, "human", "q2", "gpt", "a2"),
			want: []string{"v: u:q a:" + long + " u:q2 a:a2"}, joined: 1, overlaps: 1,
		},
		{
			name: "repeated tail removed",
			in:   sg("v_0", "human", "q", "gpt", "head "+long) + sg("v_1", "gpt", long, "human", "q2"),
			want: []string{"v: u:q a:head " + long + " u:q2"}, joined: 1, overlaps: 1,
		},
		{
			name: "longer repeat replaces the cut message",
			in:   sg("v_0", "human", "q", "gpt", long) + sg("v_1", "gpt", long+"tail", "human", "q2"),
			want: []string{"v: u:q a:" + long + "tail u:q2"}, joined: 1, overlaps: 1,
		},
		{
			name: "overlap position but different text: separate",
			in:   sg("v_0", "human", "q", "gpt", "a") + sg("v_1", "gpt", "b", "human", "q2"),
			want: []string{"v_0: u:q a:a", "v_1: u:q2"}, separate: 1,
			dropped: map[Reason]int{},
		},
		{
			name: "a missing part splits the chain; the rest keeps joining",
			in:   sg("m_0", "human", "q0", "gpt", "a0") + sg("m_4", "human", "q4", "gpt", "a4") + sg("m_6", "human", "q6"),
			want: []string{"m_0: u:q0 a:a0", "m_4: u:q4 a:a4 u:q6"}, joined: 1, separate: 1,
		},
		{
			name:    "late overlapping part dropped with --parts adjacent",
			opts:    Options{Dedupe: true},
			in:      sg("w_0", "human", "q", "gpt", long) + sg("x", "human", "x") + sg("w_1", "gpt", long, "human", "q2"),
			want:    []string{"w_0: u:q a:" + long, "x: u:x"},
			dropped: map[Reason]int{ReasonPartNotAdjacent: 1},
		},
		{
			name: "late part that does not continue is kept",
			opts: Options{Dedupe: true},
			in:   sg("w_0", "human", "q", "gpt", "a") + sg("x", "human", "x") + sg("w_5", "human", "q5"),
			want: []string{"w_0: u:q a:a", "x: u:x", "w_5: u:q5"},
		},
		{
			name: "parts all joins an overlapping late part",
			opts: Options{Parts: PartsAll},
			in:   sg("w_1", "gpt", long, "human", "q2") + sg("x", "human", "x") + sg("w_0", "human", "q", "gpt", long),
			want: []string{"w: u:q a:" + long + " u:q2", "x: u:x"}, joined: 1, overlaps: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sum := checkConvert(t, tc.opts, tc.in, tc.want, tc.dropped)
			if sum.PartsJoined != tc.joined || sum.PartOverlaps != tc.overlaps || sum.PartsSeparate != tc.separate {
				t.Errorf("joined %d overlaps %d separate %d, want %d %d %d", sum.PartsJoined, sum.PartOverlaps, sum.PartsSeparate, tc.joined, tc.overlaps, tc.separate)
			}
		})
	}
}
