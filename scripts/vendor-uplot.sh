#!/usr/bin/env bash
# vendor-uplot.sh VERSION: refresh the uPlot files embedded in mtstats' HTML
# report (internal/report/htmlassets) from the npm registry.
set -euo pipefail
version=${1:?usage: scripts/vendor-uplot.sh VERSION}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$version" >/dev/null && tar xzf uplot-*.tgz)
dst=$root/internal/report/htmlassets
cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$dst/"
cp "$tmp/package/LICENSE" "$dst/LICENSE.uPlot"
sed -i "s/| [0-9][0-9.]* | MIT/| $version | MIT/" "$dst/PROVENANCE.md"
echo "uPlot $version vendored into $dst"
