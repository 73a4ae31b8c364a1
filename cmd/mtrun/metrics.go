package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/replay"
)

// metricsOptions are the --metrics-* flags.
type metricsOptions struct {
	off      bool
	urls     []string // --metrics-url; none: the server's own /metrics, if it answers
	interval time.Duration
	file     string         // --metrics-file; "": next to --records
	limits   metrics.Limits // --metrics-max-series, --metrics-max-bytes

	// Set during the run, for the manifest.
	path    string
	targets []metrics.TargetStats
}

// metricsOptions checks the --metrics-* flags.
func (v *flagValues) metricsOptions() (metricsOptions, error) {
	m := metricsOptions{off: v.noMetrics, urls: v.metricsURLs.Value(), interval: v.metricsInterval, file: v.metricsFile,
		limits: metrics.Limits{MaxSeries: v.metricsMaxSeries, MaxBytes: v.metricsMaxBytes}}
	if m.interval <= 0 {
		return m, command.Usagef("--metrics-interval %s: want a positive duration", m.interval)
	}
	if m.limits.MaxSeries <= 0 || m.limits.MaxBytes <= 0 {
		return m, command.Usagef("--metrics-max-series %d, --metrics-max-bytes %d: want positive numbers", m.limits.MaxSeries, m.limits.MaxBytes)
	}
	for _, u := range m.urls {
		if p, err := url.Parse(u); err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			return m, command.Usagef("--metrics-url %q: want an http(s) URL", metrics.Display(u))
		}
	}
	return m, nil
}

// seriesPath is --metrics-file, or the records file name with
// ".metrics.jsonl" and the records' compression (.zst for Parquet);
// "" when records go to stdout.
func seriesPath(o *options) string {
	if o.metrics.file != "" {
		return o.metrics.file
	}
	if o.records == "" || o.records == "-" {
		return ""
	}
	base, suffix := o.records, ""
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

// startMetrics starts scraping the server's metrics into the series file,
// registered with outs so that closing the outputs stops the scraper (with
// a last scrape) before closing the file. The server's own /metrics is
// scraped only when it answers in the exposition format; an endpoint
// given with --metrics-url is scraped whatever it answers (each failure
// is a warning and an up=0 row). Nothing here fails the run but a series
// file that cannot be created.
func startMetrics(ctx context.Context, o *options, stderr io.Writer, outs *outputs) error {
	m := &o.metrics
	if m.off {
		return nil
	}
	warnf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "mtrun: warning: "+format+"\n", args...)
	}
	path := seriesPath(o)
	if path == "" {
		if len(m.urls) > 0 {
			warnf("--metrics-url: the records go to stdout, so the series are not kept: give --metrics-file or --records FILE")
		}
		return nil
	}
	client := &http.Client{}
	var targets []metrics.Target
	for _, u := range m.urls {
		targets = append(targets, metrics.Target{URL: u, Header: serverHeaders(o, u)})
	}
	if len(targets) == 0 {
		t := metrics.Target{URL: metrics.DefaultURL(o.replay.URL)}
		t.Header = serverHeaders(o, t.URL)
		if metrics.Probe(ctx, client, t) != nil {
			return nil // no Prometheus endpoint there: scraping is off
		}
		targets = append(targets, t)
	}
	out, err := iox.Create(path, nil)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	red := replay.NewRedactor(&o.replay)
	scr := metrics.Start(metrics.Options{
		Targets: targets, Interval: m.interval, RunID: o.replay.RunID, Client: client,
		Redact: red.String, Warnf: warnf, Limits: m.limits,
	}, metrics.NewWriter(out))
	m.path = path
	outs.add(path, closerFunc(func() error {
		m.targets = scr.Stop()
		return out.Close()
	}))
	return nil
}

// serverHeaders are the headers sent to a metrics URL on the server's own
// host (its API key and --header values); none to another host.
func serverHeaders(o *options, u string) http.Header {
	a, errA := url.Parse(u)
	b, errB := url.Parse(o.replay.URL)
	if errA != nil || errB != nil || a.Host != b.Host {
		return nil
	}
	h := o.replay.Headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	if o.replay.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.replay.APIKey)
	}
	return h
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// seriesInfo is the manifest's "metrics" object.
type seriesInfo struct {
	File     string                `json:"file"`
	Interval string                `json:"interval"`
	Targets  []metrics.TargetStats `json:"targets,omitempty"`
}

func (m *metricsOptions) manifest() *seriesInfo {
	if m.path == "" {
		return nil
	}
	return &seriesInfo{File: m.path, Interval: m.interval.String(), Targets: m.targets}
}
