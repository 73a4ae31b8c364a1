package metrics

import (
	"context"
	"errors"
	"fmt"
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

// ShortTimeout bounds the probe of a server's own endpoint and the last
// scrape, which a slow endpoint must not make the run's start or end
// wait for.
const ShortTimeout = 2 * time.Second

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
	// EdgeTimeout bounds the first scrape, which Start waits for, and
	// the last, at Stop (a scrape in flight then is cancelled), so that a
	// slow endpoint holds neither the run's start nor its end;
	// ShortTimeout when 0.
	EdgeTimeout time.Duration
	Limits      Limits
	RunID       string
	Client      *http.Client // http.DefaultClient when nil
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
	// DroppedSeries counts the series left out over Limits.MaxSeries,
	// summed over the scrapes; Truncated the scrapes cut at
	// Limits.MaxBytes.
	DroppedSeries int `json:"dropped_series,omitempty"`
	Truncated     int `json:"truncated,omitempty"`
}

// Scraper scrapes every target at the interval, from Start to Stop.
type Scraper struct {
	o     Options
	w     *Writer
	stop  chan struct{}
	wg    sync.WaitGroup
	stats []TargetStats
	// ctx is cancelled EdgeTimeout after Stop: it ends the scrapes in
	// flight then; end is that time, the last scrapes' deadline.
	ctx    context.Context
	cancel context.CancelFunc
	end    time.Time
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
	if o.EdgeTimeout <= 0 {
		o.EdgeTimeout = ShortTimeout
	}
	o.Limits = o.Limits.withDefaults()
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
	s.ctx, s.cancel = context.WithCancel(context.Background())
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
// written and returns the counts. It returns within EdgeTimeout (and the
// time to write): the scrapes in flight and the last ones share that
// deadline.
func (s *Scraper) Stop() []TargetStats {
	s.end = time.Now().Add(s.o.EdgeTimeout)
	t := time.AfterFunc(s.o.EdgeTimeout, s.cancel)
	defer t.Stop()
	close(s.stop)
	s.wg.Wait()
	s.cancel()
	for _, st := range s.stats {
		if st.Failed > 0 {
			s.o.Warnf("metrics %s: %d of %d scrapes failed", st.URL, st.Failed, st.Scrapes)
		}
	}
	return s.stats
}

func (s *Scraper) loop(i int, first *sync.WaitGroup) {
	defer s.wg.Done()
	failing, limited := false, false
	scrape := func(edge, last bool) {
		sc, err := s.scrape(i, edge, last)
		if errors.Is(err, errStopped) {
			return // the last scrape follows
		}
		st := &s.stats[i]
		st.Scrapes++
		st.DroppedSeries += sc.Dropped
		if sc.Truncated {
			st.Truncated++
		}
		if (sc.Dropped > 0 || sc.Truncated) && !limited {
			limited = true
			var what []string
			if sc.Dropped > 0 {
				what = append(what, fmt.Sprintf("%d series dropped (over %d, --metrics-max-series)", sc.Dropped, s.o.Limits.MaxSeries))
			}
			if sc.Truncated {
				what = append(what, fmt.Sprintf("the exposition cut at %d bytes (--metrics-max-bytes)", s.o.Limits.MaxBytes))
			}
			s.o.Warnf("metrics %s: %s; the canonical series are kept, the drops counted in the manifest (warned once)", st.URL, strings.Join(what, ", "))
		}
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
	scrape(true, false)
	first.Done()
	tick, stopTicker := s.o.Ticker(s.o.Interval)
	defer stopTicker()
	for {
		select {
		case <-tick:
			scrape(false, false)
		case <-s.stop:
			scrape(true, true)
			return
		}
	}
}

// errStopped is the error of a scrape cancelled by Stop.
var errStopped = errors.New("stopped")

// scrape fetches target i once and writes its samples, or an up=0 row:
// within Timeout, or EdgeTimeout (when shorter) for the first and the
// last scrape. A scrape cancelled by Stop writes nothing and returns
// errStopped. Every text of a sample passes Redact: an endpoint may echo
// the request's headers into names, label names and values.
func (s *Scraper) scrape(i int, edge, last bool) (Scrape, error) {
	t := s.o.Targets[i]
	parent, timeout := s.ctx, s.o.Timeout
	if edge {
		timeout = min(timeout, s.o.EdgeTimeout)
	}
	if last {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	if last {
		ctx, cancel = context.WithDeadline(ctx, s.end)
		defer cancel()
	}
	at := s.o.Now()
	sc, err := Fetch(ctx, s.o.Client, t, s.o.Limits)
	if err != nil && !last && s.ctx.Err() != nil {
		return sc, errStopped
	}
	samples := sc.Samples
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
		smp := &samples[k]
		smp.RunID, smp.Time, smp.Replica, smp.URL = s.o.RunID, at.UTC(), i, url
		smp.Name = s.o.Redact(smp.Name)
		if len(smp.Labels) > 0 {
			labels := make(map[string]string, len(smp.Labels))
			for k, v := range smp.Labels {
				labels[s.o.Redact(k)] = s.o.Redact(v)
			}
			smp.Labels = labels
		}
	}
	if werr := s.w.Write(samples); werr != nil && err == nil {
		err = fmt.Errorf("writing the series: %w", werr)
	}
	return sc, err
}

// Fetch scrapes t once, within l. An answer that is not a 200 in the
// text exposition format is an error.
func Fetch(ctx context.Context, c *http.Client, t Target, l Limits) (Scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return Scrape{}, err
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
		return Scrape{}, err
	}
	// The body is not drained: a connection whose body was not read to
	// the end is closed, and the next scrape opens another.
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Scrape{}, fmt.Errorf("HTTP %s", resp.Status)
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); ct != "" && mt != "text/plain" {
		return Scrape{}, &notExpositionError{contentType: ct}
	}
	sc, err := ParseLimited(resp.Body, l)
	if err != nil {
		return sc, err
	}
	if len(sc.Samples) == 0 {
		return sc, errors.New("empty exposition")
	}
	return sc, nil
}

// Probe reports whether t answers in the text exposition format.
func Probe(ctx context.Context, c *http.Client, t Target) error {
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, ShortTimeout)
	defer cancel()
	_, err := Fetch(ctx, c, t, Limits{})
	return err
}

// DefaultURL is the endpoint next to an OpenAI-compatible base URL:
// http://host:8000/v1 gives http://host:8000/metrics.
func DefaultURL(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/metrics"
}
