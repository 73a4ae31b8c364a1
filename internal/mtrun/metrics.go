package mtrun

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/mtkit/mtkit/internal/command"
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
	path string
	run  *metrics.Run // its Targets are the scrape counts, once closed
}

// metricsOptions checks the --metrics-* flags.
func (v *Flags) metricsOptions() (metricsOptions, error) {
	m := metricsOptions{off: v.NoMetrics, urls: v.MetricsURLs, interval: v.MetricsInterval, file: v.MetricsFile,
		limits: metrics.Limits{MaxSeries: v.MetricsMaxSeries, MaxBytes: v.MetricsMaxBytes}}
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

// startMetrics starts scraping the server's metrics into the series file
// (metrics.StartRun), registered with outs so that closing the outputs
// stops the scraper (with a last scrape) before closing the file.
func startMetrics(ctx context.Context, o *Options, stderr io.Writer, outs *command.Outputs) error {
	m := &o.metrics
	if m.off {
		return nil
	}
	warnf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "mtrun: warning: "+format+"\n", args...)
	}
	path := metrics.SeriesPath(m.file, o.records)
	if path == "" {
		if len(m.urls) > 0 {
			warnf("--metrics-url: the records go to stdout, so the series are not kept: give --metrics-file or --records FILE")
		}
		return nil
	}
	red := replay.NewRedactor(&o.Replay)
	run, err := metrics.StartRun(ctx, metrics.RunOptions{
		Server: o.server(), URLs: m.urls, Path: path, Interval: m.interval, Limits: m.limits,
		RunID: o.Replay.RunID, Redact: red.String, Warnf: warnf,
	})
	if err != nil || run == nil {
		return err
	}
	m.path, m.run = path, run
	outs.Add(path, run)
	return nil
}

// server is the server whose metrics mtrun scrapes.
func (o *Options) server() metrics.Server {
	return metrics.Server{URL: o.Replay.URL, Headers: o.Replay.Headers, APIKey: o.Replay.APIKey}
}

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
	return &seriesInfo{File: m.path, Interval: m.interval.String(), Targets: m.run.Targets}
}
