package gen

import (
	"context"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/dist"
)

// countWriter counts conversations and user tokens.
type countWriter struct{ convs, tokens int }

func (c *countWriter) Write(x *conv.Conversation) error {
	c.convs++
	for _, m := range x.Messages {
		c.tokens += m.Tokens
	}
	return nil
}

// BenchmarkGenerate reports conversations/s and generated (user and
// system message) tokens/s for 10-turn conversations.
func BenchmarkGenerate(b *testing.B) {
	tok := loadTok(b, "o200k_base")
	for _, bc := range []struct {
		name    string
		workers int
	}{{"workers=1", 1}, {"workers=max", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cfg := DefaultConfig()
			cfg.NumConversations = 200
			cfg.NumTurns = mustDist(b, "constant:10", dist.Count)
			cfg.InputTokens = mustDist(b, "lognormal:average=500,median_ratio=0.8,max=2000", dist.Count)
			cfg.CommonPrefixTokens = mustDist(b, "constant:1000", dist.Count)
			cfg.PrefixTokens = mustDist(b, "constant:500", dist.Count)
			var cw countWriter
			// Encode the corpus once so the benchmark measures generation.
			g0, err := New(cfg, tok, "o200k_base")
			if err != nil {
				b.Fatal(err)
			}
			g0.walk.Src.Ensure(1 << 30)
			b.ResetTimer()
			for range b.N {
				g, err := New(cfg, tok, "o200k_base")
				if err != nil {
					b.Fatal(err)
				}
				g.walk.Src = g0.walk.Src
				if _, err := g.Generate(context.Background(), &cw, bc.workers, nil); err != nil {
					b.Fatal(err)
				}
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(cw.convs)/s, "convs/s")
			b.ReportMetric(float64(cw.tokens)/s, "tokens/s")
		})
	}
}
