#!/bin/sh
# pm_delta.sh - a PRODUCER's own delta function for a sampled relation
# declared with `delta NAME`.  Meter (tests/testpm/meter.tq) is a 16-bit
# counter per host and device that wraps; the test PM meter
# (tests/testpm/sources.c) answers its samples and gives the delta as the
# increase modulo 65536, meterraw answers the same samples without a delta
# function.  Hosts A and B begin at 1 s, B ends at 4 s (hosts, testpm.c);
# four snapshots of the built-in clock.
#   - with meter, the engine calls its delta for each sample matched with
#     the previous tick's (same host and device), from the second tick on,
#     with both samples at their own ticks; the call log must equal
#     tests/testpm/delta.log and the results delta.csv (rx always 30000);
#   - with meterraw the engine subtracts: rx wraps to -35536 at 3 s
#     (delta_raw.csv);
#   - replaying what the meter run recorded subtracts too (the recording
#     holds the samples, not the producer), unless the producer is loaded
#     with the replay (--pm meter=): then its delta is used again.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
log=$OUT/pm_delta.log
rm -f "$log" "$OUT/pm_delta.trace"
# run NAME ARGS...: tqmon run of meter.tq, CSV to $OUT/pm_delta_NAME.csv, no messages
run() {
  name=$1
  shift
  $T run $D/meter.tq --pm-path build/testpm --format csv "$@" >"$OUT/pm_delta_$name.csv" 2>"$OUT/pm_delta_$name.err"
  rc=$?
  [ $rc -eq 0 ] || { echo "$name: exit $rc"; cat "$OUT/pm_delta_$name.err"; exit 1; }
  [ -s "$OUT/pm_delta_$name.err" ] && { echo "$name: unexpected messages:"; cat "$OUT/pm_delta_$name.err"; exit 1; }
}
run meter --snapshots 4 --pm hosts=leave=4 --pm meter=log=$log --record "$OUT/pm_delta.trace"
run raw --snapshots 4 --pm hosts=leave=4 --pm meterraw=
run replay --replay "$OUT/pm_delta.trace"
run replay_pm --replay "$OUT/pm_delta.trace" --pm meter=
diff -u $D/delta.log "$log" || exit 1
diff -u $D/delta.csv "$OUT/pm_delta_meter.csv" || exit 1
diff -u $D/delta_raw.csv "$OUT/pm_delta_raw.csv" || exit 1
diff -u $D/delta_raw.csv "$OUT/pm_delta_replay.csv" || exit 1
diff -u $D/delta.csv "$OUT/pm_delta_replay_pm.csv" || exit 1
echo ok
