#!/bin/sh
# browser_axis.sh - times on the display page in chromium (issue 14.12,
# tests/browser/axis.mjs): a live run's page (the mailbox program) has its
# axis, time field and clock in wall-clock dates with the clock badge fully
# visible; a recording's page (the paper's example) has them in offsets;
# a result valid from beginning does not stretch the axis back to it.
# Exits 77 (skipped, with the reason) without chromium or playwright-core.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/browser_axis
rm -rf "$dir" && mkdir -p "$dir"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
  echo "skipped: no chromium (Debian package chromium; sh tests/deps.sh test installs it)"
  exit 77
fi
if ! command -v node > /dev/null 2>&1 || [ ! -d tests/browser/node_modules/playwright-core ]; then
  echo "skipped: no node or no playwright-core in tests/browser/node_modules (sh tests/deps.sh test installs them)"
  exit 77
fi
E=examples/paper
$T run examples/mailbox/monitor.tq $E/display.tq --quiet --html "$dir/live.html" \
  --exec build/mailbox/mailbox -n 100 -u 2000 -l "$dir/mailbox.log" 2> "$dir/live.err" ||
  { cat "$dir/live.err"; exit 1; }
node tests/browser/axis.mjs live "$dir/live.html" "$dir" "$CHROMIUM"
$T run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --html "$dir/paper.html"
node tests/browser/axis.mjs recording "$dir/paper.html" "$dir" "$CHROMIUM"
$T run tests/browser/beginning.tq --replay tests/browser/beginning.trace --quiet --html "$dir/beginning.html"
node tests/browser/axis.mjs beginning "$dir/beginning.html" "$dir" "$CHROMIUM"
echo ok
