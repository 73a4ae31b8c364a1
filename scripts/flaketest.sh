#!/usr/bin/env bash
# flaketest.sh runs the default unit test suite, `go test -race ./...`,
# N times in a row (default 20) while busy loops it starts keep every core
# busy, and prints each run's result, how long it took and the total. It
# exits non-zero if any run failed. The busy loops are its own children,
# stopped by PID when it ends (also on Ctrl-C).
#
#   scripts/flaketest.sh [-n N] [-busy K] [-keep DIR] [-- go test flags]
#
#   -n N       runs (default 20)
#   -busy K    busy loops (default: one per core, nproc)
#   -keep DIR  keep each run's output as DIR/run-NN.txt (default: only the
#              failed runs' output is kept, in a temporary directory that
#              is printed)
#
# Each run uses -count=1 so that no result comes from the test cache.
# Flags after -- go to every go test run (e.g. -timeout 30m).
set -euo pipefail
cd "$(dirname "$0")/.."

n=20
busy=$(nproc)
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) n="$2"; shift 2 ;;
    -busy) busy="$2"; shift 2 ;;
    -keep) keep="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "flaketest.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
done
if ! [[ "$n" =~ ^[1-9][0-9]*$ && "$busy" =~ ^[0-9]+$ ]]; then
  echo "flaketest.sh: -n wants a count above 0, -busy a count" >&2
  exit 2
fi
out="${keep:-$(mktemp -d -t flaketest.XXXXXX)}"
mkdir -p "$out"

# The test fixtures, as scripts/test.sh fetches them: without them the
# tokenizer tests would skip.
bash scripts/fixtures.sh >/dev/null
export MTKIT_REQUIRE_FIXTURES=1

pids=()
stop_busy() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  pids=()
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM
for ((i = 0; i < busy; i++)); do
  bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "flaketest: $n runs of go test -race -count=1 ./... $*, with $busy busy loops (PIDs ${pids[*]}) on $(nproc) cores; outputs in $out"

failed=0
started=$(date +%s)
for ((i = 1; i <= n; i++)); do
  log="$out/run-$(printf %02d "$i").txt"
  t0=$(date +%s)
  if go test -race -count=1 "$@" ./... >"$log" 2>&1; then
    result=PASS
    [[ -n "$keep" ]] || rm -f "$log"
  else
    result=FAIL
    failed=$((failed + 1))
  fi
  printf 'flaketest: run %d/%d %s in %ds (load %s)\n' "$i" "$n" "$result" "$(($(date +%s) - t0))" "$(cut -d' ' -f1-3 /proc/loadavg)"
  if [[ $result == FAIL ]]; then
    grep -E '^(--- FAIL|FAIL|panic:)' "$log" | head -20 | sed 's/^/    /'
    echo "    full output: $log"
  fi
done
stop_busy
printf 'flaketest: %d of %d runs passed, %d failed, in %ds\n' "$((n - failed))" "$n" "$failed" "$(($(date +%s) - started))"
[[ $failed -eq 0 ]]
