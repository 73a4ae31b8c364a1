#!/usr/bin/env bash
# slowtest.sh runs, with the race detector, the tests of every package that
# has slow tests (those importing internal/slowtest), with
# MTKIT_SLOW_TESTS=1: the whole-corpus differential tests of the built-in
# tokenizers, the 150,000-token retention run and the like, which the
# default suite (scripts/test.sh) runs in a smaller case or skips. It is a
# step of .ci/run.
#
#   scripts/slowtest.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/fixtures.sh >/dev/null
export MTKIT_REQUIRE_FIXTURES=1 MTKIT_SLOW_TESTS=1
mapfile -t pkgs < <(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
  awk '/ github.com\/mtkit\/mtkit\/internal\/slowtest( |$)/ {print $1}')
if [[ ${#pkgs[@]} -eq 0 ]]; then
  echo "slowtest.sh: no package imports internal/slowtest" >&2
  exit 1
fi
go test -race -count=1 -timeout 30m "$@" "${pkgs[@]}"
