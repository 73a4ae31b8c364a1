package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec    string
		want    Config
		wantErr string
	}{
		{"", Config{}, ""},
		{"ttft=50ms,prefill=0.1ms,decode=10ms,cache=100000,max-running=64,fail-every=5,status=503",
			Config{TTFTBase: 50 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodePerToken: 10 * time.Millisecond,
				CacheTokens: 100000, MaxRunning: 64, Faults: Faults{FailEvery: 5, ErrorStatus: 503}}, ""},
		{" model=m , seed=-3, slowdown=0.05, block=32, max-model-len=8192, max-tokens=64, reasoning=8, api-key=k, addr=127.0.0.1:9000",
			Config{Model: "m", Seed: -3, DecodeSlowdownPerSeq: 0.05, BlockSize: 32, MaxModelLen: 8192, DefaultMaxTokens: 64,
				ReasoningTokens: 8, APIKey: "k", Addr: "127.0.0.1:9000"}, ""},
		{"error-rate=0.01,burst=5,status=503", Config{Faults: Faults{ErrorRate: 0.01, ErrorBurst: 5, ErrorStatus: 503}}, ""},
		{"burst=-2", Config{}, "burst: must be >= 0"},
		{"precise", Config{Precise: true}, ""},
		{"precise=false,max_running=2", Config{MaxRunning: 2}, ""},
		{"error-rate=0.1,rate-limit=0.2,retry-after=3s,stall-rate=0.3,stall=2s,disconnect-rate=0.4,malformed-rate=0.5",
			Config{Faults: Faults{ErrorRate: 0.1, RateLimitRate: 0.2, RetryAfter: 3 * time.Second, StallRate: 0.3, Stall: 2 * time.Second,
				DisconnectRate: 0.4, MalformedRate: 0.5}}, ""},
		{"preset=realistic,decode=5ms", Config{TTFTBase: 20 * time.Millisecond, PrefillPerToken: 50 * time.Microsecond,
			DecodePerToken: 5 * time.Millisecond, DecodeSlowdownPerSeq: 0.02, MaxRunning: 256, CacheTokens: 1_000_000}, ""},
		{"ttft=50", Config{}, `item 1 "ttft=50": ttft: duration "50" needs a unit`},
		{"decode=fast", Config{}, `decode: invalid duration "fast"`},
		{"ttft=-5ms", Config{}, "negative duration"},
		{"cache=lots", Config{}, `cache: invalid integer "lots"`},
		{"max-running=-1", Config{}, "must be >= 0"},
		{"bogus=1", Config{}, `unknown key "bogus"`},
		{"seed", Config{}, `key "seed" needs a value`},
		{"precise=maybe", Config{}, "invalid boolean"},
		{"error-rate=1.5", Config{}, "Faults.ErrorRate: must be a probability in [0, 1]"},
		{"status=200", Config{}, "Faults.ErrorStatus: must be an HTTP error status"},
		{"preset=fast", Config{}, `unknown preset "fast"`},
		{"slowdown=NaN", Config{}, `invalid number "NaN"`},
		{"tokenizer=/no/such/file.json", Config{}, "tokenizer"},
		{"cache=30000,offload=120_000,offload-load=0.01ms,hide-cached", Config{CacheTokens: 30000, OffloadTokens: 120000,
			OffloadLoadPerToken: 10 * time.Microsecond, HideCachedTokens: true}, ""},
		{"hide-cached=false,offload-load=1us", Config{OffloadLoadPerToken: time.Microsecond}, ""},
		{"offload=1000", Config{}, "OffloadTokens: an offload tier needs a first tier"},
		{"cache=8,offload=1000", Config{}, "CacheTokens must hold at least one block (16 tokens), got 8"},
		{"offload-load=-1us", Config{}, "negative duration"},
		{"offload=-5", Config{}, "offload: must be >= 0"},
		{"hide-cached=yes", Config{}, "invalid boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			got, err := ParseConfig(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			again, err := ParseConfig(got.Spec())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("Spec round trip %q: %+v, %v", got.Spec(), again, err)
			}
		})
	}
}

func TestParseConfigTokenizer(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig("tokenizer=cl100k")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokenizer == nil || c.Tokenizer.Name() != "cl100k_base" {
		t.Fatalf("tokenizer %v", c.Tokenizer)
	}
	if !strings.Contains(c.Spec(), "tokenizer=cl100k_base") {
		t.Fatalf("spec %q", c.Spec())
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{TTFTBase: -1},
		{DecodeSlowdownPerSeq: -0.1},
		{BlockSize: -16},
		{Faults: Faults{StallRate: 2}},
		{Faults: Faults{ErrorStatus: 302}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted an invalid config", cfg)
		}
	}
}

func TestSpecHelpListsEveryKey(t *testing.T) {
	t.Parallel()
	help := SpecHelp()
	for _, k := range specKeys {
		if !strings.Contains(help, k.name) {
			t.Errorf("SpecHelp misses %s", k.name)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", "ttft=50ms,decode=1ms", "precise", "preset=realistic", "error-rate=0.5,status=503",
		"seed=-1,,model=x", "cache=1_000", "a=b=c", "stall=1h2m", "burst=3,fail-every=7",
		"cache=30000,offload=120000,offload-load=0.01ms,hide-cached", "offload=5", "hide-cached=0,offload-load=2us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if strings.Contains(strings.ToLower(spec), "tokenizer") {
			return // would read files
		}
		c, err := ParseConfig(spec)
		if err != nil {
			return
		}
		if _, err := c.withDefaults(); err != nil {
			t.Fatalf("ParseConfig(%q) accepted an invalid config: %v", spec, err)
		}
		if strings.ContainsAny(c.Model+c.APIKey+c.Addr, ",=") {
			return // such values cannot be written back in the spec syntax
		}
		again, err := ParseConfig(c.Spec())
		if err != nil {
			t.Fatalf("ParseConfig(%q) of its own Spec: %v", c.Spec(), err)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip of %q via %q:\n%+v\n%+v", spec, c.Spec(), c, again)
		}
	})
}
