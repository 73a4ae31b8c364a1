#!/usr/bin/env bash
# offload-demo.sh answers "Does KV offloading help my server?" on two
# simulators, in one command: the same `mtrun --sweep active` (4 clients,
# the active conversations doubling per stage) against a server whose
# prefix cache holds 30,000 tokens, and against the same server with a
# 120,000-token offload tier behind it (a miss costs 0.05 ms of prefill per
# token, a load from the offload tier 0.005 ms), then `mtstats --compare`.
# Past ~30,000 tokens of working set the first server's TTFT climbs while
# the second's stays flat; the report says where and by how much.
#
# Usage: scripts/offload-demo.sh [DIR]   (DIR keeps the records; default a temp dir)
# It builds the tools into ${MTKIT_CACHE:-~/.cache/mtkit}/bin first. About a
# minute; the simulators run in-process on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${MTKIT_CACHE:-$HOME/.cache/mtkit}/bin"
mkdir -p "$bin"
go build -o "$bin/" ./cmd/...
dir="${1:-$(mktemp -d -t mtkit-offload-XXXXXX)}"
mkdir -p "$dir"

# 10-turn conversations of 100-token questions and 50-token answers.
"$bin/mtgen" --num-conversations 300 --turns constant:20 --input-tokens constant:100 \
	--output-tokens constant:50 --seed 1 >"$dir/convs.jsonl"

server="ttft=5ms,prefill=0.05ms,decode=0.2ms,max-running=64,cache=30000"
for run in off on; do
	config="$server"
	[[ $run == on ]] && config="$server,offload=120000,offload-load=0.005ms"
	echo "== $run: --sim-config $config" >&2
	"$bin/mtrun" --sim --sim-config "$config" --min-tokens \
		--sweep active --clients 4 --sweep-max 128 --stage-duration 4s --stage-warmup 1s \
		--records "$dir/$run.jsonl" --capacity "$dir/$run.capacity.json" "$dir/convs.jsonl"
done
"$bin/mtstats" --compare off="$dir/off.jsonl" on="$dir/on.jsonl"
echo "records, capacities and conversations in $dir" >&2
