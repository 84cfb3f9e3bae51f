#!/bin/sh
# shm_monitors.sh - one monitor at a time on a program's segment: a second
# --attach to a monitored program is refused with a message (it would take
# the first one's packets: both would lose some, and see ends without
# begins), the first goes on losing nothing; once the first has ended, or
# died, another may attach.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_monitors
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
jsensor() { grep "\"name\": \"$2\"" "$1" | sed "s/.*\"$3\": \([0-9]*\).*/\1/"; }
# waits (10 s at most) until process $1 has mapped the segment of $2
mapped() {
  i=0
  while [ $i -lt 200 ] && ! grep -q "tqmon\.$2" "/proc/$1/maps" 2>/dev/null; do
    sleep 0.05
    i=$((i + 1))
  done
  sleep 0.3
}

$MB -n 1000000 -u 500 -l "$dir/mb.log" &
sub=$!
i=0
while [ $i -lt 200 ] && [ ! -e /dev/shm/tqmon.$sub ]; do
  sleep 0.05
  i=$((i + 1))
done

# the first monitor, for 300 ticks (3 s)
$T run examples/mailbox/monitor.tq --attach $sub --snapshots 300 --quiet --stats "$dir/first.json" 2>"$dir/first.err" &
first=$!
mapped $first $sub
# a second one is refused while the first runs
$T run examples/mailbox/monitor.tq --attach $sub --snapshots 5 --quiet 2>"$dir/second.err"
rc=$?
[ $rc -eq 1 ] || bad "second monitor: exit $rc (expected 1): $(cat "$dir/second.err")"
grep -q "process $sub is monitored already, by tqmon process $first: one monitor at a time" "$dir/second.err" ||
  bad "second monitor: message: $(cat "$dir/second.err")"
wait $first
rc=$?
[ $rc -eq 0 ] || bad "first monitor: exit $rc: $(cat "$dir/first.err")"
grep -q "invalid\|lost" "$dir/first.err" && bad "first monitor: $(cat "$dir/first.err")"
[ "$(jsensor "$dir/first.json" SendMessage delivered)" -gt 0 ] || bad "first monitor: no SendMessage delivered"

# the first ended: the next one attaches
$T run examples/mailbox/monitor.tq --attach $sub --snapshots 200 --quiet --stats "$dir/third.json" 2>"$dir/third.err" &
third=$!
mapped $third $sub
# killed, it lets the next one take over
kill -KILL $third
wait $third 2>/dev/null
$T run examples/mailbox/monitor.tq --attach $sub --snapshots 100 --quiet --stats "$dir/fourth.json" 2>"$dir/fourth.err"
rc=$?
[ $rc -eq 0 ] || bad "after a killed monitor: exit $rc: $(cat "$dir/fourth.err")"
grep -q "invalid" "$dir/fourth.err" && bad "after a killed monitor: $(cat "$dir/fourth.err")"
[ "$(jsensor "$dir/fourth.json" SendMessage delivered)" -gt 0 ] || bad "after a killed monitor: no SendMessage delivered"

kill $sub 2>/dev/null
wait $sub 2>/dev/null
rm -f /dev/shm/tqmon.$sub # (killed, it could not remove it)
[ $fails -eq 0 ]
