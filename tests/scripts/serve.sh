#!/bin/sh
# serve.sh - tqmon serve: the live page over HTTP while a run goes on.  The
# paper's example is replayed slowly (--display pace=S) so that the run
# lasts: node (tests/browser/serve.mjs) reads the page, the event stream
# and /model.json; then chromium, when installed, opens the page of a
# second run and sees it follow the run live.  Node, and then chromium,
# starts before the run it watches, so that a slow start cannot make it
# miss the run (node once started after the 2.6 s run was over, on a busy
# machine, and saw every step at once).  The servers listen on 127.0.0.1
# at a free port and stop on SIGINT with exit status 0.
# Exits 77 (skipped, with the reason) without node.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/serve
rm -rf "$dir" && mkdir -p "$dir"
if ! command -v node > /dev/null 2>&1; then
  echo "skipped: no node (Debian package nodejs; sh tests/deps.sh test installs it)"
  exit 77
fi
E=examples/paper
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2> /dev/null || true; }
trap cleanup EXIT
# serve NAME PACE: starts a server in the background, sets pid and url
serve() {
  $T serve $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet \
    --serve 127.0.0.1:0 --display pace=$2 2> "$dir/$1.stderr" &
  pid=$!
  url=""
  for i in $(seq 1 100); do
    # (the file may not exist yet: the shell of the background job opens it)
    url=$(sed -n 's/^tqmon: serving the display on \(http:[^ ]*\)$/\1/p' "$dir/$1.stderr" 2> /dev/null || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$dir/$1.stderr"; exit 1; }
  case $url in http://127.0.0.1:*/) ;; *) echo "not on loopback: $url"; exit 1 ;; esac
}
# stop NAME: SIGINT, then the exit status must be 0 and stderr clean
stop() {
  kill -INT "$pid"
  st=0
  wait "$pid" || st=$?
  pid=""
  [ $st = 0 ] || { echo "tqmon serve exited $st"; cat "$dir/$1.stderr"; exit 1; }
  if grep -q "Sanitizer\|runtime error" "$dir/$1.stderr"; then cat "$dir/$1.stderr"; exit 1; fi
  grep -q "the run is over; still serving" "$dir/$1.stderr"
}

# ready WHO: waits (at most 120 s) until node made $dir/WHO.ready, or exited
ready() {
  for i in $(seq 1 1200); do
    [ -e "$dir/$1.ready" ] && break
    kill -0 $node 2> /dev/null || break
    sleep 0.1
  done
  [ -e "$dir/$1.ready" ] || { echo "node ($1) did not start in 120 s"; kill $node 2> /dev/null; exit 1; }
}
# (node first, however long it takes to start, then the run it reads)
node tests/browser/serve.mjs http - "$dir" &
node=$!
ready http
serve http 0.004
echo "$url" > "$dir/url.tmp" && mv "$dir/url.tmp" "$dir/url"
st=0
wait $node || st=$?
stop http
[ $st = 0 ] || exit 1
rm -f "$dir/url"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -n "$CHROMIUM" ] && [ -d tests/browser/node_modules/playwright-core ]; then
  # chromium first (however long it takes to start), then the run it watches
  node tests/browser/serve.mjs browser - "$dir" "$CHROMIUM" &
  node=$!
  ready browser
  serve browser 0.03
  echo "$url" > "$dir/url.tmp" && mv "$dir/url.tmp" "$dir/url"
  st=0
  wait $node || st=$?
  stop browser
  [ $st = 0 ] || exit 1
else
  echo "(the browser part needs chromium and playwright-core: not run)"
fi
echo ok
