#!/usr/bin/env bash
# setup.sh prepares the benchmark-only vLLM converter (scripts/vllm/README.md):
# Debian's python3 with python3-pandas and python3-tqdm (apt, when missing
# and run as root), and a check that the converter file in the fixture
# directory is the pinned one. It prints the converter's path.
#
# Usage: scripts/vllm/setup.sh
# Env:   MTKIT_FIXTURES  fixture directory (default ${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures)
# Exit:  0 ready, 1 not ready (the reason on stderr)
set -euo pipefail

dir="${MTKIT_FIXTURES:-${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures}"
file="$dir/vllm/convert_sharegpt_to_openai.py"
sum=fa95b7aa5b18368fb144a8617b154f23b128073a50d1c3bb91c17c2ff4e18353
py=/usr/bin/python3

if [[ ! -f $file ]]; then
  echo "vllm/setup.sh: $file missing: see scripts/vllm/README.md" >&2
  exit 1
fi
got=$(sha256sum "$file" | cut -d' ' -f1)
if [[ $got != "$sum" ]]; then
  echo "vllm/setup.sh: $file: sha256 $got, want $sum (the pinned commit of scripts/vllm/README.md)" >&2
  exit 1
fi
[[ -x $py ]] || { echo "vllm/setup.sh: $py missing (apt-get install python3)" >&2; exit 1; }
if ! "$py" -c 'import pandas, tqdm' 2>/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "vllm/setup.sh: installing python3-pandas python3-tqdm (benchmark only)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pandas python3-tqdm >&2
  else
    echo "vllm/setup.sh: $py lacks pandas or tqdm: apt-get install python3-pandas python3-tqdm" >&2
    exit 1
  fi
fi
echo "$file"
