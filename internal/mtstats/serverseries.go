package mtstats

import (
	"errors"
	"fmt"

	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/retention"
	"github.com/mtkit/mtkit/internal/serverstats"
)

// pairSeries sets o.Metrics to the series file next to the one records
// input, when there is one and no --metrics was given.
func (o *Options) pairSeries() {
	if o.Metrics == "" && !o.NoMetrics && len(o.Inputs) == 1 && !o.Compare {
		o.Metrics = serverstats.SeriesPath(o.Inputs[0])
	}
	if o.NoMetrics {
		o.Metrics = ""
	}
}

// useSeries takes the server-metrics series files found among the inputs
// (ExpandInputs) as --metrics-file: at most one, agreeing with the flag,
// and beside records to join it with.
func useSeries(o *Options, series []string) error {
	if len(series) == 0 {
		return nil
	}
	first := seriesName(series[0])
	switch {
	case len(series) > 1:
		return &UsageError{fmt.Errorf("%s and %s are both server-metrics series: give one (--metrics-file)", first, seriesName(series[1]))}
	case o.Metrics != "" && o.Metrics != series[0]:
		return &UsageError{fmt.Errorf("%s is a server-metrics series, and --metrics-file names %s: give one", first, o.Metrics)}
	case len(o.Inputs) == 0:
		return &UsageError{fmt.Errorf("%s is a server-metrics series: give the records file too", first)}
	case o.Records || o.To != "":
		return &UsageError{errors.New("--records and --to write records: a server-metrics series is no input of theirs")}
	}
	o.Metrics = series[0]
	return nil
}

// seriesName is how messages name a series input: "-" is stdin.
func seriesName(p string) string {
	if p == "-" {
		return "stdin"
	}
	return p
}

// attachServer adds the server report to rep when a series file is known
// and some measured request has a time.
func (c *collector) attachServer(rep *report.Report) error {
	ws, we, timed := c.all.Window()
	if c.opts.Metrics == "" || !timed {
		return nil
	}
	var sr *serverstats.Server
	var err error
	if c.opts.seriesIn != nil && c.opts.Metrics == "-" {
		sr, err = serverstats.JoinReader(c.opts.seriesIn, "stdin", ws, we, rep.Summary.CacheHitRate, rep.Series)
	} else {
		sr, err = serverstats.Join(c.opts.Metrics, ws, we, rep.Summary.CacheHitRate, rep.Series)
	}
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	rep.Server = sr
	return nil
}

// startRetention starts the cache retention analysis of the records read
// so far on a goroutine of its own, to run while the caller builds the
// report and reads the server's metrics (they are the only input of the
// tier split, which the returned function adds). The returned function
// adds the analysis to rep: of all records, with the tiers of the server
// report when it has them, or of each --compare input. The caller holds
// c.mu until that function has returned.
func (c *collector) startRetention() (attach func(rep *report.Report)) {
	type analysis struct {
		label string
		p     *retention.Pass
		a     *retention.Analysis
	}
	var passes []analysis
	if c.ret != nil {
		passes = append(passes, analysis{p: c.ret})
	}
	for _, f := range c.in.Files {
		if p := c.retBy[f.Label]; p != nil {
			passes = append(passes, analysis{label: f.Label, p: p})
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range passes {
			passes[i].a = passes[i].p.Analyze()
		}
	}()
	return func(rep *report.Report) {
		<-done
		if c.ret != nil {
			var o retention.Options
			if rep.Server != nil && rep.Server.Tiers != nil {
				o.Tiers = make([]retention.TierInterval, len(rep.Server.Tiers))
				for i, h := range rep.Server.Tiers {
					o.Tiers[i] = retention.TierInterval(h)
				}
			}
			rep.Retention = passes[0].a.Result(o)
			return
		}
		for _, a := range passes {
			rep.RetentionByInput = append(rep.RetentionByInput, report.LabeledRetention{Key: a.label, Result: a.a.Result(retention.Options{})})
		}
	}
}
