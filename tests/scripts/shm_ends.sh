#!/bin/sh
# shm_ends.sh - whatever ends a monitor of a program it started (--exec),
# the program is not left running and no segment is left in /dev/shm: the
# segment is a memfd (no name; it goes with the last process that maps it)
# and the subject gets a parent-death signal.  Each of SIGINT, SIGTERM and
# SIGKILL is sent to the monitor.  A subject that dies is reported, not
# passed off as an end: a message, "stopped_early" in --stats, its open
# intervals ended.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_ends
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
# waits (20 s at most) until process $1 is gone; 1 if it is not
gone() {
  i=0
  while [ $i -lt 400 ] && kill -0 "$1" 2>/dev/null; do
    sleep 0.05
    i=$((i + 1))
  done
  ! kill -0 "$1" 2>/dev/null
}
# the subject the monitor $1 started, once it runs (10 s at most)
subjectOf() {
  i=0
  while [ $i -lt 200 ]; do
    s=$(pgrep -P "$1" -f "$MB" | head -1)
    if [ -n "$s" ] && grep -q SEND "$2" 2>/dev/null; then
      echo "$s"
      return
    fi
    sleep 0.05
    i=$((i + 1))
  done
}

for sig in INT TERM KILL; do
  # (a background job of a shell ignores SIGINT: given back its default)
  env --default-signal=INT,TERM $T run examples/mailbox/monitor.tq --db "$dir/$sig.db" --quiet \
    --exec $MB -n 1000000 -u 500 -l "$dir/$sig.log" 2>"$dir/$sig.err" &
  mon=$!
  sub=$(subjectOf $mon "$dir/$sig.log")
  if [ -z "$sub" ]; then
    bad "SIG$sig: the subject did not start: $(cat "$dir/$sig.err")"
    kill -KILL $mon 2>/dev/null
    wait $mon 2>/dev/null
    continue
  fi
  grep -q "memfd:tqmon-sensors" /proc/$sub/maps || bad "SIG$sig: the subject's segment is not a memfd"
  kill -$sig $mon
  gone $mon || { bad "SIG$sig: the monitor did not end"; kill -KILL $mon; }
  wait $mon 2>/dev/null
  gone $sub || { bad "SIG$sig: the subject $sub was left running"; kill -KILL $sub; }
  ls /dev/shm | grep -q "^tqmon\.\($mon\|$sub\)\b" && bad "SIG$sig: a segment was left in /dev/shm: $(ls /dev/shm | grep "^tqmon\.\($mon\|$sub\)")"
done

# the subject dies mid-way
$T run examples/mailbox/monitor.tq tests/mailbox/waits.tq --db "$dir/died.db" --quiet --stats "$dir/died.json" \
  --exec $MB -n 1000000 -u 500 -l "$dir/died.log" 2>"$dir/died.err" &
mon=$!
sub=$(subjectOf $mon "$dir/died.log")
[ -n "$sub" ] && kill -KILL "$sub"
wait $mon
rc=$?
[ $rc -eq 0 ] || bad "subject killed: the monitor exited with $rc: $(cat "$dir/died.err")"
grep -q "tqmon: shm: warning: the subject (pid $sub) was killed by signal 9 (Killed) at .*: the run stopped early; [0-9]* open intervals\? \(was\|were\) ended there" "$dir/died.err" ||
  bad "subject killed: message: $(cat "$dir/died.err")"
grep -q '"stopped_early": true' "$dir/died.json" || bad "subject killed: stopped_early is not true in --stats"
open=$(sqlite3 "$dir/died.db" "SELECT count(*) FROM Waits WHERE valid_to IS NULL")
[ "$open" = 0 ] || bad "subject killed: $open waits left open"

# a subject that ends by itself is not stopped early
$T run examples/mailbox/monitor.tq --quiet --stats "$dir/ended.json" --exec $MB -n 20 -u 500 -l "$dir/ended.log" 2>"$dir/ended.err" ||
  bad "subject ended: exit $?: $(cat "$dir/ended.err")"
grep -q '"stopped_early": false' "$dir/ended.json" || bad "subject ended: stopped_early is not false in --stats"
grep -q "warning" "$dir/ended.err" && bad "subject ended: $(cat "$dir/ended.err")"
[ $fails -eq 0 ]
