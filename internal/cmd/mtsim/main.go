// Command mtsim serves mtkit's simulated OpenAI-compatible server (package
// internal/sim) on a loopback port, so that other tools can be pointed at
// it. The first line on stdout is the base URL ("http://127.0.0.1:PORT");
// diagnostics go to stderr. It stops on SIGINT or SIGTERM and then prints
// what it served. See docs/simulator.md.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/sim"
)

func main() {
	os.Exit(run(context.Background(), os.Args, command.OSStreams()))
}

const usageText = `mtsim [--addr HOST:PORT] [--config SPEC] [--seed N]

Examples:
   mtsim --config preset=realistic
   mtsim --addr 127.0.0.1:8000 --config ttft=50ms,prefill=0.1ms,decode=10ms,cache=100000,max-running=64
   mtsim --config fail-every=5,status=503,rate-limit=0.05,retry-after=2s --seed 7
   mtsim --config decode=5ms > url.txt & mtrun --url "$(sleep 1; head -n1 url.txt)" conversations.jsonl`

const description = `Serves GET /v1/models, POST /v1/chat/completions and POST /v1/completions
(streaming and not) with the timing model, prefix cache and faults given by
--config, a comma-separated list of key=value items:

`

// run is main with injected streams; it returns the exit code.
func run(ctx context.Context, args []string, s command.Streams) int {
	app := command.NewApp("mtsim", "serve the simulated OpenAI-compatible server on a loopback port", s)
	app.UsageText = usageText
	app.Description = description + sim.SpecHelp()
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "addr", Aliases: []string{"a"}, Value: "127.0.0.1:0", Usage: "listen on `HOST:PORT` (port 0: a free port)"},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "simulator `SPEC`, e.g. ttft=50ms,decode=10ms,cache=100000 (keys above)"},
		&cli.Int64Flag{Name: "seed", Usage: "`N` seeds output text, ids and faults (overrides seed= in --config)"},
	}
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return command.Usagef("unexpected argument %q", c.Args().First())
		}
		cfg, err := sim.ParseConfig(c.String("config"))
		if err != nil {
			return command.Usagef("--config: %v", err)
		}
		if c.IsSet("seed") {
			cfg.Seed = c.Int64("seed")
		}
		if c.IsSet("addr") || cfg.Addr == "" {
			cfg.Addr = c.String("addr")
		}
		return serve(c.Context, cfg, s)
	}
	return command.Run(ctx, app, args)
}

// serve runs the server until the first interrupt.
func serve(ctx context.Context, cfg sim.Config, s command.Streams) error {
	stop, _, release := command.Interrupts(ctx, s.Signals)
	defer release()
	srv, err := sim.Start(stop, cfg)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(s.Out, srv.URL); err != nil {
		_ = srv.Close()
		return fmt.Errorf("writing the URL: %w", err)
	}
	eff := srv.Server.Config()
	shown := cfg
	if shown.APIKey != "" {
		shown.APIKey = "***"
	}
	fmt.Fprintf(s.Err, "mtsim: serving model %q at %s/v1 (tokenizer %s; config %q); stop with Ctrl-C\n",
		eff.Model, srv.URL, eff.Tokenizer.Name(), shown.Spec())
	<-srv.Done()
	err = srv.Close()
	st := srv.Server.Stats()
	fmt.Fprintf(s.Err, "mtsim: stopped: %d requests, %d completed, %d rejected, %d injected errors (%d bursts), %d rate-limited, "+
		"%d stalls, %d disconnects, %d malformed, %d canceled by clients; %d prompt tokens (%d cached), %d completion tokens\n",
		st.Requests, st.Completed, st.Rejected, st.InjectedErrors, st.ErrorBursts, st.RateLimited, st.Stalls, st.Disconnects, st.Malformed,
		st.Canceled, st.PromptTokens, st.CachedTokens, st.CompletionTokens)
	return err
}
