#!/bin/sh
# display_memory.sh - the display's memory is bounded (issue 15.10): a live
# run of the mailbox program drawn into a page and served at once
# (--display html=FILE,serve=127.0.0.1:0,history=16) for about 30 s.  It
# grew about 110 MB/s (a symbol per clock label and per ghost, every bar
# and every step's JSON kept); now the model keeps what is drawn and the
# open bars, and the page and the server keep 16 MB of steps each, older
# ones summarised (display/history.c).  Checked: the monitor's peak RSS
# (sampled from /proc while it runs, and its own --stats figure) stays
# under 200 MB (it levels off near 65 MB here), the page is written, says what it summarised and loads as
# JSON, and SIGTERM ends the run with the page written.  The release
# build is measured (the
# figure is the product's; AddressSanitizer's own memory is not).
set -u
TR=${TR:-build/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/display_memory
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
BOUND_KB=204800
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
# the subject runs until it is stopped (far more steps than 30 s take)
$MB -n 100000000 -u 1000 -w > "$dir/mailbox.log" &
sub=$!
i=0
while [ $i -lt 100 ] && [ ! -e /dev/shm/tqmon.$sub ]; do
  sleep 0.1
  i=$((i + 1))
done
$TR run examples/mailbox/monitor.tq examples/paper/display.tq --attach $sub --quiet --stats "$dir/stats.json" \
  --display html="$dir/page.html",serve=127.0.0.1:0,history=16 2> "$dir/run.err" &
mon=$!
peak=0
i=0
while [ $i -lt 30 ] && kill -0 $mon 2> /dev/null; do
  sleep 1
  i=$((i + 1))
  hwm=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\) kB/\1/p' /proc/$mon/status 2> /dev/null || true)
  [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
done
kill -0 $mon 2> /dev/null || bad "the monitor ended early: $(cat "$dir/run.err")"
# SIGTERM ends the run: the page is written then (and the stats)
kill -TERM $mon
wait $mon
rc=$?
kill $sub
wait $sub 2> /dev/null
rm -f /dev/shm/tqmon.$sub # (killed, it could not remove its segment)
[ $rc -eq 0 ] || bad "the run exited $rc on SIGTERM: $(cat "$dir/run.err")"
grep -q "SIGTERM: the run ended there" "$dir/run.err" || bad "SIGTERM: $(cat "$dir/run.err")"
echo "peak RSS sampled over ${i} s: ${peak} kB"
[ "$peak" -gt 0 ] || bad "no RSS sampled"
[ "$peak" -lt $BOUND_KB ] || bad "peak RSS ${peak} kB over the bound of $BOUND_KB kB"
stats=$(sed -n 's/.*"peak_rss_kb": \([0-9]*\).*/\1/p' "$dir/stats.json")
echo "peak RSS in --stats: ${stats:-none} kB"
[ -n "$stats" ] && [ "$stats" -lt $BOUND_KB ] || bad "--stats peak_rss_kb ${stats:-none} over the bound of $BOUND_KB kB"
[ -s "$dir/page.html" ] || bad "no page written"
size=$(wc -c < "$dir/page.html")
echo "page: $size bytes"
[ "$size" -lt 67108864 ] || bad "the page is $size bytes, over twice the history kept"
# the model embedded in the page is JSON, and says how many steps it summarised
sed -n '/<script id="tqmon-model"/,/<\/script>/p' "$dir/page.html" |
  sed -e 's/^<script id="tqmon-model" type="application\/json">//' -e 's/<\/script>$//' > "$dir/model.json"
if command -v python3 > /dev/null 2>&1; then
  python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
s = m["steps"]
assert s, "no steps"
assert all(b["i"] == a["i"] + 1 for a, b in zip(s, s[1:])), "steps not consecutive"
if m["dropped"]:
    assert s[0].get("k") == 1 and s[0]["i"] == m["dropped"], "the first step is not the keyframe of the dropped ones"
print("steps kept:", len(s), "summarised:", m["dropped"])
' "$dir/model.json" || bad "the page's model is not what it should be"
fi
grep -q "^tqmon: display: the page holds the last [0-9]* steps; the [0-9]* before them are summarised" "$dir/run.err" ||
  echo "(the run stayed under the history bound: nothing summarised)"
# history= is checked, and only as an argument of its own (a file named
# history=... is a file)
E=examples/paper
for h in 0 -1 x 99999999 ""; do
  $TR run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --display "html=$dir/h.html,history=$h" \
    > /dev/null 2> "$dir/h.err" && bad "history=$h accepted"
  grep -q "history needs megabytes from 1 to 65536" "$dir/h.err" || bad "history=$h: $(cat "$dir/h.err")"
done
$TR run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --display "html=$dir/history=2.html" 2> "$dir/h.err" ||
  bad "a page named history=2.html: $(cat "$dir/h.err")"
[ -s "$dir/history=2.html" ] || bad "a page named history=2.html was not written"
[ $fails -eq 0 ] || exit 1
echo ok
