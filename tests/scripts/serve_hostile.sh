#!/bin/sh
# serve_hostile.sh - a hostile client against the live page's server
# (display/serve.c, issue 15.1 and 15.2).  tqmon serve replays, at 0.02 s a
# step, a recording made here of the paper's system with a few hundred
# processes that all change state at every step (300 steps, more than twice
# the most the kernel buffers of a connection hold, tcp_wmem, so that a
# client that reads nothing is noticed).  The server's limits are set short
# (--display idle=2,stall=2: a connection that sends no request in 2 s, a
# client that takes nothing of what it is sent in 2 s, is dropped).  First
# the run is timed alone; then a python3 client (serve_hostile.py):
#   - sends requests with negative, huge and garbage fields, bad request
#     lines, bad headers, a body, an over-long request: each is answered
#     400 (405, 404, 431) and the server lives on;
#   - opens 4 event streams it never reads, and 200 idle connections that
#     send nothing or half a request;
#   - meanwhile a well-behaved client reads an event stream and asks for the
#     model every second: every step arrives once and in order, every model
#     request is answered, and the run still ends, within 4 times its time
#     alone plus 30 s (not frozen; a generous bound for a slow machine);
#   - then asks for 2 pages (the whole run's) it never reads, and holds
#     every connection 10 s (5 times the stall limit) before it closes them.
# Then the server stops on SIGINT with exit 0 and reports the connections
# it dropped: at least the 200 idle ones as idle and the 6 that never read
# as not reading.  Exits 77 (skipped, with the reason) without python3.
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
# processes: about 150 bytes of steps each a step, for 300 steps, at least
# twice the most a connection's send buffer holds, and 2 MB more
wmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_wmem 2> /dev/null || echo 4194304)
np=$(awk -v w="$wmem" 'BEGIN { n = int((2 * w + 2097152) / (300 * 150)) + 1; print n < 100 ? 100 : n }')
awk -v np="$np" 'BEGIN { print "0s Processor+ A"; print "0s Mailbox+ M1"
  split("Ready Running Blocked", st, " ")
  for (t = 0; t < 300; t++) for (p = 0; p < np; p++) printf "%ds Process+ P%d %s\n", t, p, st[(t + p) % 3 + 1]
  for (p = 0; p < np; p++) printf "300s Process- P%d\n", p }' > "$dir/busy.trace"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2> /dev/null || true; }
trap cleanup EXIT
now() { date +%s.%N; }
# serve NAME: tqmon serve in the background (pid), its stderr in NAME.stderr;
# port: the port it serves on (linger: it serves after the run)
serve() {
  $T serve $E/paper.tq $E/queries.tq $E/display.tq --replay "$dir/busy.trace" --quiet \
    --serve 127.0.0.1:0 --display pace=0.02 --display idle=2,stall=2 2> "$dir/$1.stderr" &
  pid=$!
  url=""
  for i in $(seq 1 600); do
    url=$(sed -n 's/^tqmon: serving the display on \(http:[^ ]*\)$/\1/p' "$dir/$1.stderr" 2> /dev/null || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$dir/$1.stderr"; exit 1; }
  port=${url#http://127.0.0.1:}
  port=${port%/}
}
stop() { # stops the server (SIGINT): exit 0, no sanitizer report
  kill -INT "$pid"
  rc=0
  wait "$pid" || rc=$?
  pid=""
  if grep -q "Sanitizer\|runtime error" "$dir/$1.stderr"; then cat "$dir/$1.stderr"; exit 1; fi
  [ $rc = 0 ] || { echo "tqmon serve ($1) exited $rc"; cat "$dir/$1.stderr"; exit 1; }
}

# the run alone: how long until it is over
t0=$(now)
serve alone
i=0
until grep -q "the run is over; still serving" "$dir/alone.stderr"; do
  i=$((i + 1))
  [ $i -lt 6000 ] || { echo "the run alone did not end in 600 s"; exit 1; }
  sleep 0.1
done
alone=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
stop alone
echo "the run alone: $alone s"

# the run with the hostile client
t0=$(now)
serve serve
st=0
python3 tests/scripts/serve_hostile.py "$port" "$dir/serve.stderr" "$t0" "$alone" || st=$?
stop serve
[ $st = 0 ] || { echo "the hostile client's checks failed"; cat "$dir/serve.stderr"; exit 1; }
grep -q "the run is over; still serving" "$dir/serve.stderr" || { echo "the run did not end"; exit 1; }
line=$(grep "^tqmon: serve: connections dropped: .* bad requests answered" "$dir/serve.stderr") ||
  { echo "the dropped connections are not reported"; cat "$dir/serve.stderr"; exit 1; }
idle=$(echo "$line" | sed -n 's/.*dropped: \([0-9]*\) idle (no request in 2 s).*/\1/p')
stall=$(echo "$line" | sed -n 's/.* \([0-9]*\) not reading (2 s).*/\1/p')
{ [ -n "$idle" ] && [ "$idle" -ge 200 ]; } || { echo "not the 200 idle connections dropped as idle: $line"; exit 1; }
{ [ -n "$stall" ] && [ "$stall" -ge 6 ]; } || { echo "not the 6 connections that never read dropped: $line"; exit 1; }
echo "ok: $line"
