#!/usr/bin/env bash
# demo.sh runs mtkit's main job on the embedded defaults, no server needed:
#   mtgen (embedded corpus, o200k tokenizer) | mtrun --sim (built-in simulator
#   on 127.0.0.1) | mtstats --by turn
# It builds the tools into ${MTKIT_CACHE:-~/.cache/mtkit}/bin first.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${MTKIT_CACHE:-$HOME/.cache/mtkit}/bin"
mkdir -p "$bin"
go build -o "$bin/" ./cmd/...

"$bin/mtgen" --num-conversations 64 --seed 1 --turns uniform:4:10 --input-tokens lognormal:average=200,max=800 \
    --output-tokens constant:48 --system-prefix-tokens 1000 --prefix-tokens 100 \
    --think-time exponential:mean=200ms \
  | "$bin/mtrun" --sim --sim-config ttft=15ms,prefill=0.02ms,decode=2ms,cache=500000,max-running=32 \
      --clients 16 --active 32 --seed 1 \
  | "$bin/mtstats" --by turn
