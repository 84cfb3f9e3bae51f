#!/bin/sh
# pm_timer.sh - a client-defined TIMER replaces the built-in clock: the test
# PM ticks (tests/testpm/sources.c) times a collection with snapshots at the
# irregular times 1, 2.5, 4 and 7 s, then says DONE.  The call log must equal
# tests/testpm/timer.log exactly: ticks is asked for each next time (from
# g->now, which is the previous snapshot's time) and gets PREBASELINE; the
# producers are called at those times only; each timer tick closes exactly
# one snapshot at its time, holding what came since the previous one (the
# Busy samples of the base ticks in between, taken when the timer gets
# there); the collection ends at 7 s.  The results must equal timer.csv:
# Load events at the snapshot times, Busy samples at every base tick, and
# what depends on now (7 s) known at the end: intervals up to 7 s, the
# events before it (not the one at 7 s).  The end of a collection is its last
# snapshot even when nothing comes then (timer_now.csv: snapshots at 1, 2
# and 5 s, host B ends at 2 s, both hosts' intervals up to now end at 5 s).
# A timer that goes back in time ends the collection with a message and
# exit status 1, keeping the results so far (timer_back.out).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
log=$OUT/pm_timer.log
rm -f "$log"
$T run $D/sensors.tq $D/timer.tq --pm-path build/testpm --format csv \
  --pm ticks=log=$log,at=1+2.5+4+7 \
  --pm mon=log=$log,sync=snapshot_end \
  --pm load=log=$log,dep=hosts \
  --pm hosts=log=$log \
  --pm busy=log=$log \
  >"$OUT/pm_timer.csv" 2>"$OUT/pm_timer.err"
rc=$?
[ $rc -eq 0 ] || { echo "exit $rc"; cat "$OUT/pm_timer.err"; exit 1; }
[ -s "$OUT/pm_timer.err" ] && { echo "unexpected messages:"; cat "$OUT/pm_timer.err"; exit 1; }
diff -u $D/timer.log "$log" || exit 1
diff -u $D/timer.csv "$OUT/pm_timer.csv" || exit 1

$T run $D/sensors.tq $D/now.tq --pm-path build/testpm --format csv --pm ticks=at=1+2+5 --pm hosts=leave=2 \
  >"$OUT/pm_timer_now.csv" 2>&1 || { echo "now: exit $?"; cat "$OUT/pm_timer_now.csv"; exit 1; }
diff -u $D/timer_now.csv "$OUT/pm_timer_now.csv" || exit 1

# a timer going back: 1 s, 3 s, then 2 s
$T run $D/sensors.tq $D/timer.tq --pm-path build/testpm --format csv \
  --pm ticks=at=1+3+2+5 --pm load=dep=hosts --pm hosts= --pm busy= \
  >"$OUT/pm_timer_back.csv" 2>"$OUT/pm_timer_back.err"
echo "exit $?" | cat - "$OUT/pm_timer_back.err" "$OUT/pm_timer_back.csv" >"$OUT/pm_timer_back.out"
diff -u $D/timer_back.out "$OUT/pm_timer_back.out" || exit 1
echo ok
