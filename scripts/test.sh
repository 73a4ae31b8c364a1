#!/usr/bin/env bash
# test.sh is the project's test command (README "Tests", .ci/run step 1):
# fetches the tokenizer fixtures (npm, cached outside the repo), checks
# formatting, vet, go mod tidy and staticcheck (staticcheck.conf), and
# runs every unit test with the race detector, then the tests of the
# modules of their own: the Kubernetes manifests (deploy/kubernetes) and
# the JSON library comparison (bench/jsonlibs).
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
if ! go mod tidy -diff >/dev/null 2>&1; then
  echo "go mod tidy would change go.mod/go.sum: run go mod tidy" >&2
  exit 1
fi
staticcheck_bin="${MTKIT_CACHE:-$HOME/.cache/mtkit}/bin/staticcheck-v0.8.2"
if [[ ! -x "$staticcheck_bin" ]]; then
  mkdir -p "$(dirname "$staticcheck_bin")"
  gobin=$(mktemp -d)
  GOBIN="$gobin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
  mv "$gobin/staticcheck" "$staticcheck_bin"
fi
"$staticcheck_bin" ./...
go test -race -timeout 20m "$@" ./...
# deploy/kubernetes and bench/jsonlibs are modules of their own, so that
# the Kubernetes API types the manifest tests decode into, and the JSON
# libraries the benchmarks compare mtkit with (sonic, segmentio), are not
# mtkit dependencies. bench/jsonlibs' tests check that the libraries agree
# (and compile its benchmarks; scripts/bench.sh runs them).
for mod in deploy/kubernetes bench/jsonlibs; do
  (
    cd "$mod"
    if ! go mod tidy -diff >/dev/null 2>&1; then
      echo "$mod: go mod tidy would change go.mod/go.sum" >&2
      exit 1
    fi
    go vet ./...
    "$staticcheck_bin" ./...
    go test -timeout 10m ./...
  )
done
