#!/usr/bin/env bash
# e2e.sh runs mtkit's end-to-end tests against a real inference engine. CI
# calls it as its own step; developers can too. It builds (or reuses from the
# cache) Ollama, fetches the Qwen tokenizer fixture, generates the tiny test
# model, then runs the e2e test package, which starts and stops the engine.
#
# Usage: scripts/e2e.sh [go test flags, e.g. -v -run TestSIGINT]
# Env:   MTKIT_CACHE (default $HOME/.cache/mtkit): Ollama build, fixtures, model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

t0=$(date +%s)
MTKIT_OLLAMA=$(bash scripts/ollama/build.sh)
MTKIT_QWEN_TOKENIZER=$(bash scripts/fixtures.sh | grep '/qwen3/tokenizer.json$')
export MTKIT_OLLAMA MTKIT_QWEN_TOKENIZER
go run ./internal/cmd/mkgguf -tokenizer "$MTKIT_QWEN_TOKENIZER" >/dev/null
echo "e2e.sh: engine and model ready in $(($(date +%s) - t0)) s ($MTKIT_OLLAMA)" >&2
exec go test -tags e2e -count=1 -timeout 40m ./e2e/ "$@"
