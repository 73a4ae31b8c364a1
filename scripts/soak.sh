#!/usr/bin/env bash
# soak.sh runs mtrun for a long time against the simulator (mtsim) with
# about 5 % injected faults of every kind the simulator has, on loopback
# only, and checks that nothing is lost and nothing grows
# (docs/reliability.md, "Soak"). Not part of CI: it takes --duration.
#
# Usage: scripts/soak.sh [-d DURATION] [-c CLIENTS] [-s SECONDS] [-f SPEC]
#   -d DURATION  how long mtrun starts turns (mtrun --duration; default $SOAK_DURATION or 30m)
#   -c CLIENTS   concurrent users (default 8; --active is twice that)
#   -s SECONDS   sampling interval of mtrun's RSS and goroutines (default 60)
#   -f SPEC      fault part of the simulator config (default below, ~5 % of requests)
# Env:   SOAK_OUT  directory for the conversations, records and logs (default: a
#        temporary directory, removed when the soak passes)
#
# Each fault kind is ~1 % of requests: HTTP 500 in bursts of 3, 429 with a
# 1 s Retry-After, a 2 s stall mid-stream, a cut stream (dropped connection)
# and a malformed SSE line. At the end it prints, as Markdown for
# docs/reliability.md: requests the simulator received, faults by kind
# (the simulator's own counters, GET /sim/stats, next to what the records
# show), records written, records lost (requests received − records of
# requests that reached the server; must be 0), responses sent in full
# without a malformed line against records without error (must be equal)
# and the RSS and goroutine
# samples (must be flat: the last sample at most 1.5× the RSS and
# 1.25× + 16 the goroutines of the baseline, the first sample after a
# minute of warm-up).
#
# Secrets: mtrun gets an API key and a --header value made for the run,
# and the simulator runs with echo-secrets, so its /metrics endpoint (which
# mtrun scrapes into records.metrics.jsonl) writes them into metric names,
# label names and values and HELP text, and every injected error quotes
# them plainly, base64-encoded and JSON-escaped twice. At the end every
# output (records, series, conversations, manifest, mtrun's stderr, and
# mtstats' report and --to Parquet/JSONL of the records) is searched for
# each form of each secret (as written, JSON-escaped, as a Prometheus
# name, base64 in both alphabets with and without "Bearer "): there must
# be none, and some [REDACTED] markers (the echoes reached the outputs).
#
# Exit status: 0 passed, 1 a check failed (records lost, growth, a tool
# failed), 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${SOAK_DURATION:-30m}
clients=8
every=60
faults='error-rate=0.0033,burst=3,status=500,rate-limit=0.01,retry-after=1s,stall-rate=0.01,stall=2s,disconnect-rate=0.01,malformed-rate=0.01'
usage() { sed -n '7,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts ':d:c:s:f:h' opt; do
  case $opt in
    d) duration=$OPTARG ;;
    c) clients=$OPTARG ;;
    s) every=$OPTARG ;;
    f) faults=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# == 0 ]] || usage
[[ $clients =~ ^[1-9][0-9]*$ && $every =~ ^[1-9][0-9]*$ ]] || usage
for tool in jq curl; do
  command -v $tool >/dev/null || { echo "soak.sh: needs $tool" >&2; exit 1; }
done

out=${SOAK_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mtkit-soak.XXXXXX")}
mkdir -p "$out/bin"
simpid= runpid=
cleanup() {
  # Only the two processes this script started, by PID.
  [[ -n $runpid ]] && kill "$runpid" 2>/dev/null || true
  [[ -n $simpid ]] && kill "$simpid" 2>/dev/null || true
}
trap cleanup EXIT

echo "soak.sh: building into $out/bin" >&2
go build -o "$out/bin/" ./cmd/mtgen ./cmd/mtrun ./cmd/mtstats ./internal/cmd/mtsim
bin=$out/bin

"$bin/mtgen" --num-conversations 200 --seed 1 --turns uniform:2:8 --input-tokens uniform:20:300 \
  --output-tokens uniform:8:64 --think-time exponential:mean=100ms >"$out/convs.jsonl" 2>"$out/mtgen.log"

simcfg="seed=1,ttft=20ms,prefill=0.02ms,decode=4ms,max-running=64,cache=200000,$faults,echo-secrets=true"
# The run's secrets: made now, so no earlier file can hold them.
key="sk-soak-$(head -c 9 /dev/urandom | od -An -tx1 | tr -d ' \n')"
token="tok-soak-$(head -c 9 /dev/urandom | od -An -tx1 | tr -d ' \n')"
stallns=1000000000 # the simulator's default stall
if [[ ,$simcfg, =~ ,stall=([0-9]+)(ms|s), ]]; then
  unit=1000000000
  [[ ${BASH_REMATCH[2]} == ms ]] && unit=1000000
  stallns=$((BASH_REMATCH[1] * unit))
fi
"$bin/mtsim" --addr 127.0.0.1:0 --config "$simcfg" >"$out/mtsim.url" 2>"$out/mtsim.log" &
simpid=$!
for _ in $(seq 100); do [[ -s $out/mtsim.url ]] && break; sleep 0.1; done
url=$(head -n1 "$out/mtsim.url")
[[ $url == http://127.0.0.1:* ]] || { echo "soak.sh: mtsim did not start on loopback: ${url:-no URL}; $(cat "$out/mtsim.log")" >&2; exit 1; }

t0=$(date +%s)
"$bin/mtrun" --url "$url" --loop --duration "$duration" --clients "$clients" --active $((2 * clients)) \
  --api-key "$key" --header "X-Soak-Token: $token" -o "$out/answers.jsonl" \
  --records "$out/records.jsonl" --debug-addr 127.0.0.1:0 "$out/convs.jsonl" 2>"$out/mtrun.log" &
runpid=$!
dbg=
for _ in $(seq 100); do
  dbg=$(grep -o 'http://127\.0\.0\.1:[0-9]*/debug/stats' "$out/mtrun.log" || true)
  [[ -n $dbg ]] && break
  sleep 0.1
done
[[ -n $dbg ]] || { echo "soak.sh: mtrun did not start its debug endpoint: $(cat "$out/mtrun.log")" >&2; exit 1; }

# sample appends "seconds rss_kib goroutines heap_bytes sim_requests".
sample() {
  local rss st g heap req
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$runpid/status" 2>/dev/null) || return 0
  st=$(curl -sf --max-time 5 "$dbg") || return 0
  g=$(jq .goroutines <<<"$st")
  heap=$(jq .heap_alloc_bytes <<<"$st")
  req=$(curl -sf --max-time 5 "$url/sim/stats" | jq .requests) || return 0
  echo "$(($(date +%s) - t0)) $rss $g $heap $req" >>"$out/samples.txt"
  echo "soak.sh: t=$(($(date +%s) - t0))s RSS ${rss} KiB, $g goroutines, heap $((heap >> 20)) MiB, $req requests" >&2
}
: >"$out/samples.txt"
# The first sample once requests flow (loading the tokenizer takes a while).
for _ in $(seq 120); do
  (($(curl -sf --max-time 5 "$url/sim/stats" | jq .requests) > 0)) && break
  sleep 0.5
done
sample
next=$((t0 + every))
while kill -0 "$runpid" 2>/dev/null; do
  if (($(date +%s) >= next)); then
    sample
    next=$((next + every))
  fi
  sleep 1
done
rc=0
wait "$runpid" || rc=$?
runpid=
elapsed=$(($(date +%s) - t0))
curl -sf --max-time 5 "$url/sim/stats" >"$out/sim-stats.json"
kill -INT "$simpid"
wait "$simpid" || true
simpid=

# Records: by error class, and stalls seen (a gap between tokens, or
# before the first, at least as long as the stall; on a loaded machine a
# pause of the process can add one).
jq -r --argjson st "$stallns" '[(.error_class // "" | if . == "" then "ok" else . end),
  (if ((.itl_ns // []) | max // 0) >= $st or (.ttft_ns // 0) >= $st then 1 else 0 end)] | @tsv' \
  "$out/records.jsonl" >"$out/classes.tsv"
nrec=$(wc -l <"$out/classes.tsv")
cls() { awk -v c="$1" '$1 == c {n++} END {print n + 0}' "$out/classes.tsv"; }
stalled=$(awk '$2 == 1 {n++} END {print n + 0}' "$out/classes.tsv")
s() { jq ".$1" "$out/sim-stats.json"; }
sent=$(s requests)
unreached=$(cls connect)
lost=$((sent - (nrec - unreached)))
okrec=$(cls ok)
# Every response the simulator sent in full without a malformed line is a
# record without error (a malformed line makes the client drop the rest).
misread=$(($(s completed_clean) - okrec))

# Secrets: every output, and what mtstats makes of the records.
"$bin/mtstats" --format json "$out/records.jsonl" >"$out/stats.json" 2>"$out/mtstats.log" || rc=$((rc == 0 ? 1 : rc))
"$bin/mtstats" --to "$out/stats-to.jsonl" "$out/records.jsonl" 2>>"$out/mtstats.log" || rc=$((rc == 0 ? 1 : rc))
"$bin/mtstats" --to "$out/stats-to.parquet" "$out/records.jsonl" 2>>"$out/mtstats.log" || rc=$((rc == 0 ? 1 : rc))
outputs=("$out/records.jsonl" "$out/records.metrics.jsonl" "$out/records.manifest.json" "$out/answers.jsonl"
  "$out/mtrun.log" "$out/stats.json" "$out/mtstats.log" "$out/stats-to.jsonl")
forms=()
for sec in "$key" "$token"; do
  for v in "$sec" "Bearer $sec"; do
    b=$(printf %s "$v" | base64 -w0)
    forms+=("$b" "${b%%=*}" "$(tr '+/' '-_' <<<"$b")")
  done
  forms+=("$sec" "${sec//-/_}")
done
found=0
for f in "${outputs[@]}"; do
  [[ -e $f ]] || { status_missing+="$f "; continue; }
  for form in "${forms[@]}"; do
    n=$(grep -c -F -e "$form" "$f" || true)
    if ((n > 0)); then
      echo "soak.sh: $f holds a form of a secret ($n lines)" >&2
      found=$((found + n))
    fi
  done
done
# The Parquet copy: its strings are compressed, so read back through mtstats.
if [[ -d $out/stats-to.parquet || -f $out/stats-to.parquet ]]; then
  "$bin/mtstats" --to - "$out/stats-to.parquet" >"$out/stats-to-parquet.jsonl" 2>>"$out/mtstats.log" || true
  for form in "${forms[@]}"; do
    n=$(grep -c -F -e "$form" "$out/stats-to-parquet.jsonl" || true)
    found=$((found + n))
  done
fi
redacted=$(cat "${outputs[@]}" 2>/dev/null | grep -o -F '[REDACTED]' | wc -l)
seriesredacted=$(grep -c -F 'vllm:echo_Bearer_[REDACTED]' "$out/records.metrics.jsonl" || true)

# Flatness: the baseline is the first sample after a minute of warm-up (in
# a run shorter than that, the first sample).
mapfile -t rows <"$out/samples.txt"
base=${rows[0]}
for r in "${rows[@]}"; do
  if (( ${r%% *} >= 60 )); then base=$r; break; fi
done
last=${rows[-1]}
read -r _ brss bg _ <<<"$base"
read -r _ lrss lg _ <<<"$last"
flat=yes
(( lrss * 2 <= brss * 3 )) || flat="no: RSS grew from $((brss / 1024)) to $((lrss / 1024)) MiB"
(( lg * 4 <= bg * 5 + 64 )) || flat="no: goroutines grew from $bg to $lg"

status=pass
[[ $rc == 0 ]] || status="FAIL: mtrun exited $rc"
[[ $lost == 0 ]] || status="FAIL: $lost records lost"
[[ $misread == 0 ]] || status="FAIL: $(s completed_clean) clean responses sent in full but $okrec records without error"
[[ $flat == yes ]] || status="FAIL: not flat ($flat)"
[[ -z ${status_missing:-} ]] || status="FAIL: outputs missing: $status_missing"
((redacted > 0 && seriesredacted > 0)) || status="FAIL: no [REDACTED] marker in the outputs (the echoes did not reach them)"
[[ $found == 0 ]] || status="FAIL: $found lines of the outputs hold a form of a secret"

cat <<EOF
### Soak run: ${duration} ($(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo unknown))

\`scripts/soak.sh -d $duration -c $clients\`: mtrun --loop, $clients clients, $((2 * clients)) active conversations, against mtsim
on 127.0.0.1 (\`$simcfg\`); $(nproc) CPUs. mtrun ran ${elapsed} s and exited $rc. Result: **$status**.

| | count |
|---|---:|
| requests the simulator received | $sent |
| records written | $nrec |
| records of requests that never reached the server (connect errors) | $unreached |
| **records lost** (received − records of requests that reached it) | **$lost** |
| responses the simulator sent in full | $(s completed) |
| of which without a malformed line | $(s completed_clean) |
| records without error (must equal the line above) | $okrec |
| **lines holding a secret** (${#forms[@]} forms of 2 secrets, in ${#outputs[@]} outputs and mtstats' Parquet copy) | **$found** |
| \`[REDACTED]\` markers in the outputs (echoes that reached them) | $redacted |
| of which scrapes with the echoing metric name (\`vllm:echo_Bearer_[REDACTED]\` in the series) | $seriesredacted |

| fault kind | injected (simulator's counters) | seen in the records |
|---|---:|---|
| HTTP 500 in bursts | $(s injected_errors) in $(s error_bursts) bursts | $(cls http_5xx) \`http_5xx\` |
| 429 with Retry-After | $(s rate_limited) | $(cls rate_limit) \`rate_limit\` |
| stall mid-stream | $(s stalls) | $stalled with a gap ≥ the stall |
| cut stream (dropped connection) | $(s disconnects) | $(cls stream) \`stream\` (cut and malformed together) |
| malformed SSE line | $(s malformed) | (in \`stream\` above) |
| requests the client abandoned (after a malformed line) | $(s canceled) \`canceled\` | $(cls canceled) \`canceled\`, $(cls timeout) \`timeout\` |

mtrun's own summary: \`$(grep '^mtrun: run ' "$out/mtrun.log" | sed 's/^mtrun: //')\`

mtrun's RSS, goroutines and live heap (from \`--debug-addr\`), sampled every ${every} s; flat: $flat.

| t (s) | RSS (MiB) | goroutines | heap in use (MiB) | requests so far |
|---:|---:|---:|---:|---:|
$(awk '{printf "| %d | %.1f | %d | %.1f | %d |\n", $1, $2 / 1024, $3, $4 / 1048576, $5}' "$out/samples.txt")
EOF

if [[ $status != pass ]]; then
  echo "soak.sh: $status (files kept in $out)" >&2
  exit 1
fi
[[ -z ${SOAK_OUT:-} ]] && rm -rf "$out"
echo "soak.sh: passed" >&2
