#!/bin/sh
# html-check.sh renders mtstats' HTML reports in headless Chromium, offline,
# and checks them as a reader without a pointer sees them (issue 23):
#
#   scripts/html-check.sh [records-file] [out.png]
#
# It writes two reports: one of records-file (default the base test
# records) and the sweep comparison of the README's recipe with six inputs
# (cmd/mtstats/testdata/sweep-max{4,8}), and for each:
#   - a screenshot, for a person to look at (out.png and out-sweeps.png);
#   - the DOM after the page has drawn (--dump-dom) of a copy with
#     scripts/html-check.js injected, which checks that the header gives the
#     run's start and the time axes are in seconds, that every legend entry
#     and value-table row shows a number, that no texts drawn on a chart
#     overlap and the capacity labels overlap neither each other nor the
#     chart, and that the knee's series take their run's colour and are
#     joined;
#   - a PDF print (--print-to-pdf) whose text must hold the run start and
#     the legends' numbers.
# Findings go to stderr; it exits 1 on any failure. MTSTATS=path checks the
# reports of that mtstats binary instead of one built from this tree (to
# see an older build fail).
# It installs Debian's chromium and poppler-utils (pdftotext) when missing
# (needs root and apt).
set -eu
cd "$(dirname "$0")/.."
in=${1:-cmd/mtstats/testdata/base.jsonl}
png=${2:-/tmp/mtstats-report.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "html-check: installing $2" >&2
		apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
	fi
}
need chromium chromium
need pdftotext poppler-utils

# --disable-background-networking and no network-dependent flags: the page
# must render from the file alone. --virtual-time-budget lets the page's
# scripts draw before the dump, screenshot or print.
chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--no-first-run --hide-scrollbars --window-size=1300,2000 --virtual-time-budget=10000 \
		--user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chromium.log" || {
		cat "$tmp/chromium.log" >&2
		exit 1
	}
}

failed=0
# check NAME RUNS PNG: render $tmp/NAME.html and check it.
check() {
	name=$1 runs=$2 shot=$3
	html="$tmp/$name.html"
	chrome --screenshot="$shot" "file://$html" >/dev/null
	test -s "$shot"
	echo "$shot"
	# A copy with the checks injected first in <head>, so that they see
	# every canvas call of the page's own scripts.
	awk -v js=scripts/html-check.js -v runs="$runs" '
		!done && /<head>/ { print; print "<script>"; while ((getline l < js) > 0) print l; print "</script>"; done = 1; next }
		/<body>/ { sub(/<body>/, "<body data-check-runs=\"" runs "\">") }
		{ print }' "$html" >"$tmp/$name-check.html"
	chrome --dump-dom "file://$tmp/$name-check.html" >"$tmp/$name.dom"
	sed -n '/<pre id="html-check">/,/<\/pre>/p' "$tmp/$name.dom" |
		sed 's/<pre id="html-check">//; s/<\/pre>.*//' >"$tmp/$name.found"
	if ! grep -q '^ok ' "$tmp/$name.found"; then
		echo "html-check: $name: the checks did not run" >&2
		failed=1
	fi
	sed "s/^/html-check: $name: /" "$tmp/$name.found" >&2
	grep -q '^FAIL' "$tmp/$name.found" && failed=1
	chrome --print-to-pdf="$tmp/$name.pdf" --no-pdf-header-footer "file://$html" >/dev/null
	pdftotext -layout "$tmp/$name.pdf" "$tmp/$name.txt"
	start=$(sed -n 's/.*<time class="start">\([^<]*\)<\/time>.*/\1/p' "$html" | head -1)
	if [ -z "$start" ] || ! grep -qF "$start" "$tmp/$name.txt"; then
		echo "html-check: $name: FAIL the PDF print lacks the run start ${start:-(none in the page)}" >&2
		failed=1
	elif ! grep -qE 'mean [0-9.]+ · max [0-9.]+' "$tmp/$name.txt"; then
		echo "html-check: $name: FAIL the PDF print's legends carry no numbers" >&2
		failed=1
	else
		echo "html-check: $name: ok PDF print ($(wc -l <"$tmp/$name.txt") lines of text) holds the start and the legends' numbers" >&2
	fi
}

mtstats=${MTSTATS:-}
if [ -z "$mtstats" ]; then
	mtstats=$tmp/mtstats
	go build -o "$mtstats" ./cmd/mtstats
fi
"$mtstats" --html "$tmp/report.html" "$in" >/dev/null
check report 1 "$png"
# Six inputs, each the README recipe's sweep at 4 or 8 sequences under a
# run id of its own (records of one run would be counted once).
set --
for r in a b c d e f; do
	case $r in a | c | e) n=4 ;; *) n=8 ;; esac
	gzip -dc cmd/mtstats/testdata/sweep-max$n.jsonl.gz |
		sed "s/\"run_id\":\"[^\"]*\"/\"run_id\":\"$r\"/" >"$tmp/$r.jsonl"
	set -- "$@" "$r=$tmp/$r.jsonl"
done
"$mtstats" --compare --slo 'ttft_p95<=70ms' --html "$tmp/sweeps.html" "$@" >/dev/null
check sweeps 6 "${png%.png}-sweeps.png"
exit $failed
