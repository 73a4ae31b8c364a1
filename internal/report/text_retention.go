package report

import (
	"fmt"
	"strconv"

	"github.com/mtkit/mtkit/internal/retention"
)

// fmtShare writes a share as a percentage, "n/a" when unknown.
func fmtShare(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100**x)
}

func fmtOpt(x *float64, prec int) string {
	if x == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*x, 'f', prec, 64)
}

// retention renders the cache retention section (docs/mtstats.md,
// "Cache retention"); title names the input under --compare.
func (t *textWriter) retention(title string, r *retention.Result) {
	if r == nil {
		return
	}
	t.heading(title)
	basis := r.Basis
	switch r.Basis {
	case "":
		basis = "none"
	case retention.BasisTTFT:
		if f := r.Fit; f != nil {
			basis = fmt.Sprintf("ttft (no cached_tokens: TTFT = %.2f ms + %.4f ms per prompt token, from %d first user turns)", f.BaseMs, f.PerTokenMs, f.FirstTurns)
		}
	}
	kv := [][2]string{
		{"basis", basis},
		{"later_user_turns", fmt.Sprintf("%d (requests after a conversation's first)", r.Requests)},
		{"capacity_tokens", fmtOpt(r.CapacityTokens, 0)},
		{"capacity_conversations", fmtOpt(r.CapacityConversations, 1)},
	}
	if r.SharedPrefixTokens > 0 {
		kv = append(kv, [2]string{"shared_prefix_tokens", strconv.FormatInt(r.SharedPrefixTokens, 10)})
	}
	if ti := r.Tiers; ti != nil {
		kv = append(kv,
			[2]string{"local_capacity_tokens", fmtOpt(ti.LocalCapacityTokens, 0)},
			[2]string{"total_capacity_tokens", fmtOpt(ti.TotalCapacityTokens, 0)},
			[2]string{"hit_tokens", fmt.Sprintf("local %.0f, external %.0f", ti.LocalHitTokens, ti.ExternalHitTokens)})
	}
	if r.Note != "" {
		kv = append(kv, [2]string{"note", r.Note})
	}
	t.pairs(kv)
	if len(r.Profile) == 0 {
		return
	}
	tiers := r.Tiers != nil
	header := []string{"reuse_tokens", "requests", "idle_s_p50", "convs_p50", "cached", "ttft_p50_ms", "ms/uncached_tok"}
	if tiers {
		header = append(header, "local", "external")
	}
	rows := make([][]string, len(r.Profile))
	for i, b := range r.Profile {
		row := []string{fmt.Sprintf("%d-%d", b.Lo, b.Hi), strconv.Itoa(b.Requests), fmtOpt(b.SecondsP50, 2),
			strconv.FormatFloat(b.ConversationsP50, 'f', -1, 64), fmtShare(b.CachedShare), fmtOpt(b.TTFTP50Ms, 1), fmtOpt(b.TTFTPerUncachedTokenMs, 4)}
		if tiers {
			row = append(row, fmtShare(b.LocalShare), fmtShare(b.ExternalShare))
		}
		rows[i] = row
	}
	if t.md {
		t.printf("\n")
	}
	t.table(header, rows)
	if len(r.ProfileSeconds) > 0 {
		rows := make([][]string, len(r.ProfileSeconds))
		for i, b := range r.ProfileSeconds {
			rows[i] = []string{fmt.Sprintf("%s-%s", fmtNum(b.Lo), fmtNum(b.Hi)), strconv.Itoa(b.Requests), fmt.Sprintf("%.0f", b.TokensP50),
				fmtShare(b.CachedShare), fmtOpt(b.TTFTP50Ms, 1)}
		}
		if t.md {
			t.printf("\n")
		}
		t.table([]string{"idle_seconds", "requests", "reuse_tokens_p50", "cached", "ttft_p50_ms"}, rows)
	}
	if ti := r.Tiers; ti != nil && len(ti.Stages) > 0 {
		rows := make([][]string, len(ti.Stages))
		for i, s := range ti.Stages {
			rows[i] = []string{strconv.Itoa(s.Stage), fmt.Sprintf("%.0f", s.LocalHitTokens), fmt.Sprintf("%.0f", s.ExternalHitTokens), fmtShare(s.ExternalShare)}
		}
		if t.md {
			t.printf("\n")
		}
		t.table([]string{"stage", "local_hit_tokens", "external_hit_tokens", "external_share"}, rows)
	}
}
