package mtrun

import (
	"io"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/replay"
)

// argRedactions say how the manifest's command line shows the values of
// flags that may hold secrets: not at all, or a URL without its user name
// and password.
var argRedactions = map[string]func(string) string{
	"api-key": manifest.Hide, "header": manifest.Hide, "session-header": manifest.Hide,
	"metrics-url": metrics.Display,
}

// writeManifest writes the run's manifest (internal/manifest); sum is nil
// for the one written before the run (no summary, no end time), which
// also checks that the path can be written.
func writeManifest(o *Options, sum *replay.Summary, digest string, started time.Time, stdout io.Writer) error {
	path := manifest.Path(o.manifest, o.records)
	if path == "" || path == "-" && sum == nil {
		return nil
	}
	m := replay.NewManifest(&o.Replay, started, command.Version(), map[string]any{
		"warmup_step": o.warmupStep, "sim_config": o.simSpec,
		"schedule": o.ScheduleName(), "users": o.sched.users, "user_gap": o.sched.userGap.String(), "time_scale": o.sched.timeScale,
		"segment": o.Scale.Seg.String(), "start_at": o.Scale.Start.String(),
	})
	m.Args, m.Input, m.InputHash, m.Tokenizer = o.args, o.input, digest, o.tokenizer
	m.Simulated, m.Records, m.ConvOutput = o.sim, o.records, o.convOut
	if mi := o.metrics.manifest(); mi != nil {
		m.Metrics = mi
	}
	if sum != nil {
		replay.FinishManifest(m, sum)
	}
	return m.Write(path, stdout, replay.NewRedactor(&o.Replay).JSON) // the URL's userinfo, echoed model names
}
