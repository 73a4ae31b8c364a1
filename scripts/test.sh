#!/usr/bin/env bash
# test.sh is the project's test command (README "Tests", .ci/run step 1):
# fetches the tokenizer fixtures (npm, cached outside the repo), checks
# formatting and vet, and runs every unit test with the race detector.
# The real-engine suite (scripts/e2e.sh) and benchmarks (scripts/bench.sh)
# are separate, slower steps.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/fixtures.sh >/dev/null
export MTKIT_REQUIRE_FIXTURES=1

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -race -timeout 20m "$@" ./...
