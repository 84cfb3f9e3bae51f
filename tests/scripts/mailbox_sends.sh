#!/bin/sh
# mailbox_sends.sh - never lose an answer: every send the mailbox program
# (examples/mailbox) makes while the monitor watches all its processes is
# either in the answer or counted lost, exactly (written + lost = sent).
# The processes change state between their sends all the time: a process's
# entity tuple ends and a new one begins, so its flag goes off and on again
# in the engine; the subject must never see it off (it used to, for the few
# microseconds between the two writes, and 4-74 sends a run went missing,
# neither written nor counted).  Under --exec and under --attach.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/mailbox_sends
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
jsensor() { grep "\"name\": \"$2\"" "$1" | sed "s/.*\"$3\": \([0-9]*\).*/\1/" | head -1; }
# check NAME: the log's sends against the stored answer and the losses
check() {
  sent=$(grep -c ' SEND ' "$dir/$1.log")
  got=$(sqlite3 "$dir/$1.db" "SELECT count(*) FROM AllSends")
  lost=$(jsensor "$dir/$1.json" SendMessage lost)
  [ "$sent" -gt 1000 ] || bad "$1: the program made only $sent sends"
  [ $((${got:-0} + ${lost:-0})) -eq "$sent" ] ||
    bad "$1: the program sent $sent, the monitor wrote $got and counted $lost lost ($((sent - ${got:-0} - ${lost:-0})) unaccounted)"
  # (by process: the same)
  awk '$2 == "SEND" { print $3 }' "$dir/$1.log" | sort | uniq -c >"$dir/$1.bylog"
  sqlite3 "$dir/$1.db" "SELECT Process FROM AllSends" | sort | uniq -c >"$dir/$1.bydb"
  [ "${lost:-0}" -gt 0 ] || diff "$dir/$1.bylog" "$dir/$1.bydb" >"$dir/$1.diff" || bad "$1: sends by process differ: $(head -6 "$dir/$1.diff")"
}

# 30 processes on 4 processors, 1,000 steps each, 0.1 ms computes: about
# 10,000 sends and 50,000 state changes in a second or two
args="-p 30 -k 4 -n 1000 -u 100 -w"
for run in 1 2; do
  $T run examples/mailbox/monitor.tq tests/mailbox/sends.tq --db "$dir/exec$run.db" --quiet --stats "$dir/exec$run.json" \
    --exec $MB $args -l "$dir/exec$run.log" 2>"$dir/exec$run.err"
  rc=$?
  [ $rc -eq 0 ] || bad "exec: exit $rc: $(cat "$dir/exec$run.err")"
  check exec$run
done

# a clock whose measured offset swings by 1 ms at every snapshot (the
# test build's TQMON_TEST_CLOCK_JITTER): the TSC-to-ns line changes slope
# each time, and a packet drained after the change must still convert by
# the line of its own time (it used to take the new one, so that a
# process's end of state and its next state in another thread's ring came
# out in the wrong order: "end of interval N, which is not open")
TQMON_TEST_CLOCK_JITTER=1000000 $T run examples/mailbox/monitor.tq tests/mailbox/sends.tq --db "$dir/jitter.db" --quiet \
  --stats "$dir/jitter.json" --exec $MB $args -l "$dir/jitter.log" 2>"$dir/jitter.err"
rc=$?
[ $rc -eq 0 ] || bad "jitter: exit $rc: $(cat "$dir/jitter.err")"
grep -q "invalid: first" "$dir/jitter.err" && bad "jitter: $(grep "invalid: first" "$dir/jitter.err")"
check jitter

# attached: the program made its segment and waits (-w) until the monitor
# enabled its sensors; the monitor ends when the program does
$MB $args -l "$dir/attach.log" &
sub=$!
i=0
while [ $i -lt 200 ] && [ ! -e /dev/shm/tqmon.$sub ]; do
  sleep 0.05
  i=$((i + 1))
done
$T run examples/mailbox/monitor.tq tests/mailbox/sends.tq --attach $sub --snapshots 100000 --db "$dir/attach.db" --quiet \
  --stats "$dir/attach.json" 2>"$dir/attach.err"
rc=$?
kill $sub 2>/dev/null
wait $sub 2>/dev/null
rm -f /dev/shm/tqmon.$sub # (only if it was killed)
[ $rc -eq 0 ] || bad "attach: exit $rc: $(cat "$dir/attach.err")"
check attach
[ $fails -eq 0 ]
