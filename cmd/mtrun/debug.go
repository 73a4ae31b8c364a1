package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/debugserver"
)

// debugFlag returns the hidden --debug-addr flag (a new one per app: cli
// writes into its flags): mtrun serves its goroutine count and memory on a
// loopback port while it runs (internal/debugserver).
func debugFlag() cli.Flag {
	return &cli.StringFlag{
		Name:   "debug-addr",
		Hidden: true,
		Usage:  "serve /debug/stats (goroutines, memory) and goroutine/heap profiles on loopback `HOST:PORT`",
		Action: func(c *cli.Context, addr string) error {
			s, err := debugserver.Serve(c.Context, addr)
			switch {
			case errors.Is(err, debugserver.ErrAddress):
				return command.Usagef("--debug-addr %q: %v", addr, err)
			case err != nil:
				return fmt.Errorf("--debug-addr: %w", err)
			}
			fmt.Fprintf(c.App.ErrWriter, "mtrun: debug endpoint at %s\n", s.URL)
			return nil
		},
	}
}
