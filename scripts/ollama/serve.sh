#!/usr/bin/env bash
# serve.sh starts a real inference engine, Ollama (llama.cpp inside), on
# 127.0.0.1 serving mtkit's tiny deterministic test model, prints its base URL
# on stdout and keeps it running until Ctrl-C (or SIGTERM), then stops it.
#
# Usage: scripts/ollama/serve.sh [-p PORT] [-j PARALLEL] [-c CONTEXT]
#   -p PORT      listen port (default: a free port from 18000 up)
#   -j PARALLEL  OLLAMA_NUM_PARALLEL, requests decoded at once (default 4)
#   -c CONTEXT   OLLAMA_CONTEXT_LENGTH, tokens per request (default 16384)
#
# The model is served as "mtkit-tiny" (/v1/models lists "mtkit-tiny:latest").
# It never emits EOS: always send max_tokens. Example, in another terminal:
#   mtgen --num-conversations 8 --tokenizer ~/.cache/mtkit/fixtures/qwen3/tokenizer.json \
#     | mtrun --url http://127.0.0.1:PORT --model mtkit-tiny | mtstats
#
# Environment: MTKIT_CACHE (default $HOME/.cache/mtkit), MTKIT_OLLAMA (an
# ollama binary to use instead of building one), MTKIT_QWEN_TOKENIZER.
set -euo pipefail

port="" parallel=4 context=16384
while getopts "p:j:c:h" opt; do
	case $opt in
	p) port=$OPTARG ;;
	j) parallel=$OPTARG ;;
	c) context=$OPTARG ;;
	*)
		sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
done

log() { printf 'serve.sh: %s\n' "$*" >&2; }
command -v curl >/dev/null || {
	log "curl is needed (apt-get install curl)"
	exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ollama=${MTKIT_OLLAMA:-$(bash "$root/scripts/ollama/build.sh")}
tok=${MTKIT_QWEN_TOKENIZER:-$(bash "$root/scripts/fixtures.sh" | grep '/qwen3/tokenizer.json$')}
gguf=$(cd "$root" && go run ./internal/cmd/mkgguf -tokenizer "$tok")

if [[ -z $port ]]; then
	for p in $(seq 18000 18999); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			port=$p
			break
		fi
	done
fi
[[ -n $port ]] || {
	log "no free port in 18000-18999"
	exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/mtkit-ollama-XXXXXX")
pid=""
cleanup() {
	if [[ -n $pid ]]; then
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL -- "-$pid" 2>/dev/null || true
		log "stopped ollama (pid $pid)"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export HOME="$work" OLLAMA_HOST="127.0.0.1:$port" OLLAMA_MODELS="$work/models" \
	OLLAMA_NUM_PARALLEL="$parallel" OLLAMA_CONTEXT_LENGTH="$context" OLLAMA_KEEP_ALIVE=-1 \
	OLLAMA_MAX_LOADED_MODELS=1
url="http://127.0.0.1:$port"
# Own process group (setsid), so that stopping it also stops its runner.
setsid "$ollama" serve >"$work/ollama.log" 2>&1 &
pid=$!

for i in $(seq 300); do
	curl -fsS "$url/api/version" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || {
		tail -20 "$work/ollama.log" >&2
		log "ollama serve exited"
		exit 1
	}
	((i < 300)) || {
		log "ollama not ready after 60 s"
		exit 1
	}
	sleep 0.2
done
{
	echo "FROM $gguf"
	cat "$root/scripts/ollama/chatml.modelfile"
} >"$work/Modelfile"
"$ollama" create mtkit-tiny -f "$work/Modelfile" >/dev/null 2>&1 || {
	log "ollama create failed"
	exit 1
}
curl -fsS "$url/v1/chat/completions" -H 'Content-Type: application/json' \
	-d '{"model":"mtkit-tiny","messages":[{"role":"user","content":"ready?"}],"max_tokens":1}' >/dev/null

log "model mtkit-tiny on $url (log: $work/ollama.log); Ctrl-C stops it"
printf '%s\n' "$url"
wait "$pid"
