#!/bin/sh
# session_page.sh - the live page of tqmon daemon (--serve 0) in a real
# browser: tests/browser/session.mjs lists, adds (through the form, with a
# folding histogram), draws and removes a query about a sleep process
# started here.  Screenshot: $OUT/session_page/session.png.  Exits 77
# (skipped, with the reason) without chromium or playwright-core.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/session_page
rm -rf "$dir" && mkdir -p "$dir"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
  echo "skipped: no chromium (Debian package chromium; sh tests/deps.sh test installs it)"
  exit 77
fi
if ! command -v node >/dev/null 2>&1 || [ ! -d tests/browser/node_modules/playwright-core ]; then
  echo "skipped: no node or no playwright-core in tests/browser/node_modules (sh tests/deps.sh test installs them)"
  exit 77
fi
sock=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-page.XXXXXX") || exit 1
sleep 600 &
spid=$!
$T daemon tests/daemon/base.tq sensors/host.tq --host --socket "$sock/sock" --serve 0 2>"$dir/daemon.err" &
dpid=$!
trap 'kill $dpid $spid 2>/dev/null; rm -rf "$sock"' EXIT
k=0
until grep -q "serving" "$dir/daemon.err" 2>/dev/null; do
  k=$((k + 1))
  [ $k -gt 600 ] && { echo "FAIL: the daemon did not start: $(cat "$dir/daemon.err")"; exit 1; }
  sleep 0.1
done
url=$(sed -n 's/.*page on \(http[^ ]*\)$/\1/p' "$dir/daemon.err")
case $url in
  http://127.0.0.1:*/?token=*) ;;
  *) echo "FAIL: no loopback page address with a token: $(cat "$dir/daemon.err")"; exit 1 ;;
esac
node tests/browser/session.mjs "$url" "$spid" "$dir" "$CHROMIUM"
rc=$?
kill -TERM $dpid
wait $dpid
drc=$?
[ $drc -eq 0 ] || { echo "FAIL: the daemon ended with $drc: $(cat "$dir/daemon.err")"; rc=1; }
exit $rc
