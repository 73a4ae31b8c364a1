#!/usr/bin/env bash
# scaleout-bench.sh measures the cost of splitting a run (docs/scale-out.md):
# the same Poisson offered load against one simulator, from one mtrun process
# (1 x 1) and from four segments started together with --start-at (4 x 1/4),
# on this machine; it prints the records, TTFT and lateness of each.
#   RATE=20 DUR=20s scripts/scaleout-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-20} DUR=${DUR:-20s}
work=$(mktemp -d)
trap 'kill "$sim" 2>/dev/null || true; rm -rf "$work"' EXIT
for t in mtrun mtstats; do go build -o "$work/$t" ./cmd/$t; done
go build -o "$work/mtsim" ./internal/cmd/mtsim
"$work/mtsim" --config ttft=20ms,decode=2ms > "$work/url" 2>/dev/null & sim=$!
for _ in $(seq 100); do [[ -s "$work/url" ]] && break; sleep 0.2; done
url=$(head -n1 "$work/url")
python3 - > "$work/convs.jsonl" <<'PY'
import json
for i in range(5000):
    msgs = []
    for k in range(3):
        msgs += [{"role": "user", "content": f"q{k} of {i}"}, {"role": "assistant", "content": "a", "output_tokens": 20}]
    print(json.dumps({"id": f"c{i}", "messages": msgs}))
PY
common=(--url "$url" --tokenizer none --quiet --rate "$RATE" --seed 5 --duration "$DUR" --think-time constant:500ms)
"$work/mtrun" "${common[@]}" --run-id whole --records "$work/whole.jsonl" "$work/convs.jsonl"
start=$(date -u -d +3sec +%Y-%m-%dT%H:%M:%SZ)
pids=()
for i in 0 1 2 3; do
  "$work/mtrun" "${common[@]}" --run-id split --segment "$i/4" --start-at "$start" \
    --records "$work/split-$i.jsonl" "$work/convs.jsonl" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
echo "== 1 x 1 (--rate $RATE, $DUR)"
"$work/mtstats" "$work/whole.jsonl" | grep -E '^inputs|^ *(ttft_ms|lateness_ms) '
echo "== 4 x 1/4"
"$work/mtstats" "$work/split-?.jsonl" | grep -E '^inputs|^ *(ttft_ms|lateness_ms) |^ [0-9]+/4 '
