#!/usr/bin/env bash
# bench.sh is mtkit's self-benchmark (docs/performance.md): it builds the
# tools, runs mtbench (internal/cmd/mtbench), which starts the simulator
# on 127.0.0.1 and runs the real mtrun binary against it, times the other
# tools (mtstats side by side with DuckDB, mtconvert with vLLM's
# converter), and prints every figure next to its target with PASS/FAIL;
# then it runs the Go hot-path benchmarks (go test -bench -benchmem).
# DuckDB (npm, scripts/fixtures.sh) and vLLM's converter with Debian's
# pandas (scripts/vllm/setup.sh) are benchmark-only dependencies.
#
# Usage: scripts/bench.sh [--smoke] [mtbench options, e.g. --runs 5 --only capacity,fidelity]
#   --smoke   short run for CI: checks that every part works (and that mtstats and
#             DuckDB agree), not the timings (~2-3 min)
# Env:   MTKIT_BENCH_OUT  directory for results (default: a temporary directory);
#        it receives mtbench.json and gobench.txt
#        MTKIT_BENCH_BASE  git commit whose mtrun is measured beside this tree's
#        ("[before]" figures: trace-burst lateness, CPU per turn and per chunk,
#        the 1,000-stream error split); default 18de6e4, main before issue 26's
#        changes; empty: none
#
# Exit status: 0 ok, 3 a target was missed (full run only), 1 an error.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
for a in "$@"; do
  [[ $a == --smoke ]] && smoke=1
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mtkit-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out="${MTKIT_BENCH_OUT:-$tmp/out}"
mkdir -p "$out" "$tmp/bin"

echo "bench.sh: building binaries" >&2
go build -o "$tmp/bin/" ./cmd/... ./internal/cmd/mtbench

base=()
base_ref=${MTKIT_BENCH_BASE-18de6e4}
if [[ -n $base_ref && $smoke == 0 ]]; then
  echo "bench.sh: building mtrun at $base_ref (the [before] figures)" >&2
  mkdir -p "$tmp/base-src" "$tmp/base-bin"
  git archive "$base_ref" | tar -x -C "$tmp/base-src"
  (cd "$tmp/base-src" && go build -o "$tmp/base-bin/" ./cmd/mtrun)
  base=(--base-bin "$tmp/base-bin")
fi

extra=()
if fx=$(bash scripts/fixtures.sh 2>/dev/null); then
  q=$(grep '/qwen3/tokenizer.json$' <<<"$fx" || true)
  [[ -n $q ]] && extra=(--tokenizer-json "$q")
  # The fixtures include DuckDB: the mtstats/DuckDB agreement check must run.
  extra+=(--require-duckdb)
else
  echo "bench.sh: scripts/fixtures.sh failed: tokenizer and DuckDB figures will be n/a" >&2
fi
# Benchmark-only: vLLM's converter and Debian's pandas/tqdm for it
# (scripts/vllm/README.md); mtbench reports its figures n/a, with the
# reason, when this fails.
bash scripts/vllm/setup.sh >/dev/null || echo "bench.sh: scripts/vllm/setup.sh failed: vLLM converter figures will be n/a" >&2

status=0
"$tmp/bin/mtbench" --bin "$tmp/bin" --work "$tmp/work" --json "$out/mtbench.json" "${base[@]}" "${extra[@]}" "$@" || status=$?
if [[ $status != 0 && $status != 3 ]]; then
  exit "$status"
fi

# Go benchmarks of the hot paths: SSE chunk parse and the client (replay),
# record encode/decode (record), conversation decode (conv), tokenizer
# encode (tokenize), quantiles and aggregation (stats), simulator (sim).
pkgs=(./internal/replay ./internal/replay/openai ./internal/record ./internal/conv ./internal/tokenize ./internal/stats ./internal/mtstats ./internal/sim)
benchtime=1s
filter=.
if [[ $smoke == 1 ]]; then
  # Smoke: each benchmark once, only the client's own packages (compiling
  # every package's test binary would take most of CI's budget).
  benchtime=1x
  pkgs=(./internal/replay ./internal/replay/openai ./internal/record)
fi
echo >&2
echo "bench.sh: go test -run '^\$' -bench $filter -benchmem -benchtime $benchtime ${pkgs[*]}" >&2
go test -run '^$' -bench "$filter" -benchmem -benchtime "$benchtime" "${pkgs[@]}" | tee "$out/gobench.txt" |
  grep -E '^(Benchmark|ok|FAIL|---|pkg:)' || true
# The JSON libraries mtkit does not use (sonic, segmentio) are compared in
# a module of their own, bench/jsonlibs, on the same inputs (full runs
# only: scripts/test.sh already compiles and tests it).
if [[ $smoke == 0 ]]; then
  echo "bench.sh: (cd bench/jsonlibs && go test -run '^\$' -bench . -benchmem -benchtime $benchtime)" >&2
  (cd bench/jsonlibs && go test -run '^$' -bench . -benchmem -benchtime "$benchtime") | tee -a "$out/gobench.txt" |
    grep -E '^(Benchmark|ok|FAIL|---|pkg:)' || true
fi
if grep -q -E '^(FAIL|--- FAIL)' "$out/gobench.txt"; then
  echo "bench.sh: a Go benchmark failed" >&2
  exit 1
fi
[[ -n ${MTKIT_BENCH_OUT:-} ]] && echo "bench.sh: results in $out" >&2
exit "$status"
