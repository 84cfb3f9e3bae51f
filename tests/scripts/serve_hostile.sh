#!/bin/sh
# serve_hostile.sh - a hostile client against the live page's server
# (display/serve.c, issue 15.1 and 15.2).  While tqmon serve replays the
# paper's example slowly, a python3 client (tests/scripts/serve_hostile.py):
#   - sends requests with negative, huge and garbage fields, bad request
#     lines, bad headers, a body, an over-long request: each is answered
#     400 (405, 404, 431) and the server lives on;
#   - opens event streams and page requests it never reads, and 200 idle
#     connections that send nothing or half a request;
#   - meanwhile a well-behaved client still gets the model and sees new
#     steps arrive (collection goes on), and the run still ends: no timing
#     assertion, only a generous bound (180 s) for a run of a few seconds.
# Then the server stops on SIGINT with exit 0 and reports the connections
# it dropped.  Exits 77 (skipped, with the reason) without python3.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/serve_hostile
rm -rf "$dir" && mkdir -p "$dir"
if ! command -v python3 > /dev/null 2>&1; then
  echo "skipped: no python3"
  exit 77
fi
E=examples/paper
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2> /dev/null || true; }
trap cleanup EXIT
# the paper's example, about 0.02 s a step; linger: serves after the run
$T serve $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet \
  --serve 127.0.0.1:0 --display pace=0.02 2> "$dir/serve.stderr" &
pid=$!
url=""
for i in $(seq 1 200); do
  url=$(sed -n 's/^tqmon: serving the display on \(http:[^ ]*\)$/\1/p' "$dir/serve.stderr" 2> /dev/null || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$dir/serve.stderr"; exit 1; }
port=${url#http://127.0.0.1:}
port=${port%/}
st=0
python3 tests/scripts/serve_hostile.py "$port" "$dir/serve.stderr" || st=$?
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
if grep -q "Sanitizer\|runtime error" "$dir/serve.stderr"; then cat "$dir/serve.stderr"; exit 1; fi
[ $st = 0 ] || { echo "the hostile client's checks failed"; cat "$dir/serve.stderr"; exit 1; }
[ $rc = 0 ] || { echo "tqmon serve exited $rc"; cat "$dir/serve.stderr"; exit 1; }
grep -q "the run is over; still serving" "$dir/serve.stderr" || { echo "the run did not end"; exit 1; }
grep -q "^tqmon: serve: connections dropped: .* bad requests answered" "$dir/serve.stderr" ||
  { echo "the dropped connections are not reported"; cat "$dir/serve.stderr"; exit 1; }
echo ok
