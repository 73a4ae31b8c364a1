package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/iox"
)

// SeriesPath is where a run keeps its series: file when given, else the
// records file's name with ".metrics.jsonl" and the records' compression
// (.zst for Parquet); "" when the records go to stdout (records "" or
// "-").
func SeriesPath(file, records string) string {
	if file != "" {
		return file
	}
	if records == "" || records == "-" {
		return ""
	}
	base, suffix := records, ""
	switch {
	case strings.HasSuffix(base, ".gz"):
		suffix = ".gz"
	case strings.HasSuffix(base, ".zst"), strings.HasSuffix(base, ".parquet"):
		suffix = ".zst"
	}
	for _, ext := range []string{".gz", ".zst", ".parquet", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".metrics.jsonl" + suffix
}

// Server is the inference server whose metrics a run scrapes.
type Server struct {
	URL     string      // its OpenAI-compatible base URL
	Headers http.Header // sent with its requests (--header)
	APIKey  string
}

// HeadersFor are the headers sent to the metrics URL u: the server's
// headers and API key when u is on the server's host, none for another
// host.
func (s Server) HeadersFor(u string) http.Header {
	a, errA := url.Parse(u)
	b, errB := url.Parse(s.URL)
	if errA != nil || errB != nil || a.Host != b.Host {
		return nil
	}
	h := s.Headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	if s.APIKey != "" {
		h.Set("Authorization", "Bearer "+s.APIKey)
	}
	return h
}

// targets are the endpoints urls name, or the server's own /metrics.
func (s Server) targets(urls []string) []Target {
	if len(urls) == 0 {
		urls = []string{DefaultURL(s.URL)}
	}
	out := make([]Target, len(urls))
	for i, u := range urls {
		out[i] = Target{URL: u, Header: s.HeadersFor(u)}
	}
	return out
}

// RunOptions configure StartRun: a run's scraping into its series file.
type RunOptions struct {
	Server   Server
	URLs     []string // the endpoints to scrape; none: the server's own /metrics, if it answers
	Path     string   // the series file (iox.Create: .gz, .zst)
	Interval time.Duration
	Limits   Limits
	RunID    string
	Redact   func(string) string
	Warnf    func(format string, args ...any)
}

// Run is a run's scraping, started by StartRun.
type Run struct {
	scr *Scraper
	out io.Closer
	// Targets are the endpoints' scrape counts, once closed.
	Targets []TargetStats
}

// StartRun starts scraping into o.Path. The server's own /metrics is
// scraped only when it answers in the exposition format (else StartRun
// returns nil: scraping is off); an endpoint in o.URLs is scraped whatever
// it answers (each failure is a warning and an up=0 row). Only a series
// file that cannot be created is an error.
func StartRun(ctx context.Context, o RunOptions) (*Run, error) {
	client := &http.Client{}
	targets := o.Server.targets(o.URLs)
	if len(o.URLs) == 0 && Probe(ctx, client, targets[0]) != nil {
		return nil, nil // no Prometheus endpoint there
	}
	out, err := iox.Create(o.Path, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	scr := Start(Options{
		Targets: targets, Interval: o.Interval, RunID: o.RunID, Client: client,
		Redact: o.Redact, Warnf: o.Warnf, Limits: o.Limits,
	}, NewWriter(out))
	return &Run{scr: scr, out: out}, nil
}

// Close stops the scraper (after a last scrape), keeps its Targets and
// closes the series file.
func (r *Run) Close() error {
	r.Targets = r.scr.Stop()
	return r.out.Close()
}

// TierHits are a server's prefix-cache hits so far, in tokens, per tier
// (vLLM's prefix_cache_hits and external_prefix_cache_hits).
type TierHits struct {
	Local, External float64
	OK              bool // the server's metrics split the tiers
}

// FetchTierHits scrapes the endpoints urls (none: the server's own
// /metrics) once, summing every engine's counters; not OK when a scrape
// fails or the metrics have no external tier.
func FetchTierHits(ctx context.Context, s Server, urls []string) TierHits {
	var h TierHits
	var local, external bool
	for _, t := range s.targets(urls) {
		ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
		sc, err := Fetch(ctx, http.DefaultClient, t, Limits{})
		cancel()
		if err != nil {
			return TierHits{}
		}
		for _, x := range sc.Samples {
			if x.Value == nil {
				continue
			}
			switch x.Canonical {
			case PrefixHits:
				h.Local += *x.Value
				local = true
			case ExternalPrefixHits:
				h.External += *x.Value
				external = true
			}
		}
	}
	h.OK = local && external
	return h
}
