#!/bin/sh
# html-check.sh renders mtstats' HTML report in headless Chromium, offline,
# to a PNG, so a person (or a reviewer tool) can look at it.
#
#   scripts/html-check.sh [records-file] [out.png]
#
# It installs Debian's chromium when missing (needs root and apt).
set -eu
cd "$(dirname "$0")/.."
in=${1:-cmd/mtstats/testdata/base.jsonl}
png=${2:-/tmp/mtstats-report.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v chromium >/dev/null 2>&1; then
	echo "html-check: installing chromium" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi

go run ./cmd/mtstats --html "$tmp/report.html" "$in" >/dev/null
# --disable-background-networking and no network-dependent flags: the page
# must render from the file alone.
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
	--no-first-run --hide-scrollbars --window-size=1200,1800 \
	--user-data-dir="$tmp/profile" --screenshot="$png" "file://$tmp/report.html" >&2 2>"$tmp/chromium.log" || {
	cat "$tmp/chromium.log" >&2
	exit 1
}
test -s "$png"
echo "$png"
