package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultInterval is the time between two scrapes of one endpoint.
const DefaultInterval = time.Second

// DefaultTimeout bounds one scrape.
const DefaultTimeout = 5 * time.Second

// maxBody bounds the exposition read from one scrape.
const maxBody = 64 << 20

// accept asks for the text format (version 0.0.4), which every engine
// serves, rather than OpenMetrics.
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Target is one endpoint to scrape.
type Target struct {
	URL    string      // requested
	Header http.Header // sent with each scrape (the server's auth, for its own endpoint)
}

// Display returns u without its user name and password, for outputs.
func Display(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	p.User = nil
	return p.String()
}

// Options configure a Scraper.
type Options struct {
	Targets  []Target
	Interval time.Duration // DefaultInterval when 0
	Timeout  time.Duration // per scrape; DefaultTimeout when 0
	RunID    string
	Client   *http.Client // http.DefaultClient when nil
	// Redact cleans text derived from the URLs or the answers (errors)
	// before it reaches the series file or Warnf.
	Redact func(string) string
	// Warnf reports a target's first failure, its recovery and, at Stop,
	// its count of failed scrapes. Nil discards them.
	Warnf func(format string, args ...any)
	Now   func() time.Time // time.Now when nil
	// Ticker returns the ticks that trigger scrapes and a stop function;
	// time.NewTicker's when nil. Tests pass a channel they drive.
	Ticker func(time.Duration) (<-chan time.Time, func())
}

// TargetStats counts a target's scrapes.
type TargetStats struct {
	URL     string `json:"url"`
	Scrapes int    `json:"scrapes"`
	Failed  int    `json:"failed"`
}

// Scraper scrapes every target at the interval, from Start to Stop.
type Scraper struct {
	o     Options
	w     *Writer
	stop  chan struct{}
	wg    sync.WaitGroup
	stats []TargetStats
}

// Start scrapes every target once, concurrently, and returns when these
// first scrapes are written (so the series begin before the run does);
// then each target is scraped at every tick until Stop.
func Start(o Options, w *Writer) *Scraper {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.Warnf == nil {
		o.Warnf = func(string, ...any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Ticker == nil {
		o.Ticker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	s := &Scraper{o: o, w: w, stop: make(chan struct{}), stats: make([]TargetStats, len(o.Targets))}
	var first sync.WaitGroup
	for i := range o.Targets {
		s.stats[i].URL = o.Redact(Display(o.Targets[i].URL))
		first.Add(1)
		s.wg.Add(1)
		go s.loop(i, &first)
	}
	first.Wait()
	return s
}

// Stop scrapes every target a last time, waits for the scrapes to be
// written and returns the counts.
func (s *Scraper) Stop() []TargetStats {
	close(s.stop)
	s.wg.Wait()
	for _, st := range s.stats {
		if st.Failed > 0 {
			s.o.Warnf("metrics %s: %d of %d scrapes failed", st.URL, st.Failed, st.Scrapes)
		}
	}
	return s.stats
}

func (s *Scraper) loop(i int, first *sync.WaitGroup) {
	defer s.wg.Done()
	failing := false
	scrape := func() {
		err := s.scrape(i)
		st := &s.stats[i]
		st.Scrapes++
		switch {
		case err != nil:
			st.Failed++
			if !failing {
				s.o.Warnf("metrics %s: %s (scraping goes on; failures are counted)", st.URL, s.o.Redact(err.Error()))
			}
			failing = true
		case failing:
			s.o.Warnf("metrics %s: answers again", st.URL)
			failing = false
		}
	}
	scrape()
	first.Done()
	tick, stopTicker := s.o.Ticker(s.o.Interval)
	defer stopTicker()
	for {
		select {
		case <-tick:
			scrape()
		case <-s.stop:
			scrape()
			return
		}
	}
}

// scrape fetches target i once and writes its samples, or an up=0 row.
func (s *Scraper) scrape(i int) error {
	t := s.o.Targets[i]
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	at := s.o.Now()
	samples, err := Fetch(ctx, s.o.Client, t)
	up := Sample{Name: Up, Type: "gauge", Labels: map[string]string{}}
	if err != nil {
		up.Error = s.o.Redact(err.Error())
		samples = nil
		setValue(&up, 0)
	} else {
		setValue(&up, 1)
	}
	samples = append(samples, up)
	url := s.stats[i].URL
	for k := range samples {
		samples[k].RunID, samples[k].Time, samples[k].Replica, samples[k].URL = s.o.RunID, at.UTC(), i, url
	}
	if werr := s.w.Write(samples); werr != nil && err == nil {
		err = fmt.Errorf("writing the series: %w", werr)
	}
	return err
}

// Fetch scrapes t once. An answer that is not a 200 in the text
// exposition format is an error.
func Fetch(ctx context.Context, c *http.Client, t Target) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range t.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said by the caller, without its userinfo
		}
		return nil, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); ct != "" && mt != "text/plain" {
		return nil, &notExpositionError{contentType: ct}
	}
	samples, err := Parse(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, errors.New("empty exposition")
	}
	return samples, nil
}

// Probe reports whether t answers in the text exposition format.
func Probe(ctx context.Context, c *http.Client, t Target) error {
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	_, err := Fetch(ctx, c, t)
	return err
}

// DefaultURL is the endpoint next to an OpenAI-compatible base URL:
// http://host:8000/v1 gives http://host:8000/metrics.
func DefaultURL(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/metrics"
}
