// Command mtrun replays multi-turn conversations against an
// OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, ...) with many
// concurrent users and think time, sending each turn with the full
// history, and writes one record per request as JSONL or Parquet.
//
// Usage:
//
//	mtrun [options] [conversations.jsonl|-]
//
// See README.md and docs/mtrun.md for the options, the record fields and
// the metric definitions.
package main

import (
	"context"
	"os"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/mtrun"
)

func main() {
	os.Exit(command.Run(context.Background(), newApp(command.OSStreams(), mtrun.Run), os.Args))
}
