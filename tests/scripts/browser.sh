#!/bin/sh
# browser.sh - the display page of the paper's example in a real browser:
# tqmon writes the page (run --html), Debian's chromium loads it, driven by
# playwright-core (tests/browser/paper.mjs), which goes to 2:00:05, 2:51:13
# and 2:54:20 and checks what is drawn.  Screenshots: $OUT/browser/*.png.
# Installs nothing: tests/deps.sh test installs chromium and playwright-core.
# Exits 77 (skipped, with the reason) where they are not installed.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/browser
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
$T run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --html "$dir/paper.html"
node tests/browser/paper.mjs "$dir/paper.html" "$dir" "$CHROMIUM"
ls "$dir"/*.png > /dev/null
