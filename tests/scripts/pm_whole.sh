#!/bin/sh
# pm_whole.sh - a client-defined EXTRACTOR whose recording holds intervals
# reported whole at their end (tests/testpm/whole_late.rec, the golden case
# whole_late in the format of the test PM reader of tests/testpm/sources.c).
# Their begins come long before them, so the queries must not go past those
# begins until they come:
#  - announced at START (g->announce_whole, interface version 3) the
#    results are the golden case's, and each announce returns 0;
#  - not announced, the first one is refused by produce with a message
#    (exit 1, the results so far kept: whole_unannounced.out) instead of
#    reaching operators that already decided without it;
#  - announced after the first records, the announce is refused with a
#    warning, and then the same;
#  - a whole interval that begins after a begin made while disabled (still
#    open) needs no announce: that begin holds the queries back; nor does
#    one that cannot reach a query (whole_recent.rec, the same as its text
#    recording);
#  - two whole intervals with the same begin are both held for
#    (whole_dup.rec);
#  - a whole record of an event relation is refused (whole_event.rec).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
G=tests/golden
log=$OUT/pm_whole.log
rm -f "$log"
$T run $G/whole_late.tq --format csv --pm-path build/testpm --pm reader=file=$D/whole_late.rec,announce,log=$log \
  >"$OUT/pm_whole_announced.csv" 2>"$OUT/pm_whole_announced.err" || { echo "announced: exit $?"; cat "$OUT/pm_whole_announced.err"; exit 1; }
[ -s "$OUT/pm_whole_announced.err" ] && { echo "announced: unexpected messages:"; cat "$OUT/pm_whole_announced.err"; exit 1; }
diff -u $G/whole_late.csv "$OUT/pm_whole_announced.csv" || exit 1
grep "announce_whole" "$log" >"$OUT/pm_whole_announces.txt"
printf 'reader announce_whole Iv 3s: 0\nreader announce_whole Iv 2s: 0\n' | diff -u - "$OUT/pm_whole_announces.txt" || exit 1

# not announced / announced too late: refused, the results so far kept
for how in unannounced late; do
  a=""
  [ $how = late ] && a=",announce=late"
  $T run $G/whole_late.tq --format csv --pm-path build/testpm --pm "reader=file=$D/whole_late.rec$a" \
    >"$OUT/pm_whole_$how.csv" 2>"$OUT/pm_whole_$how.err"
  echo "exit $?" | cat - "$OUT/pm_whole_$how.err" "$OUT/pm_whole_$how.csv" >"$OUT/pm_whole_$how.out"
done
diff -u $D/whole_unannounced.out "$OUT/pm_whole_unannounced.out" || exit 1
{
  echo "exit 1"
  echo "tqmon: warning: announce_whole ignored: only an extraction, before its first record, for a relation of the program, with beginning < from < forever"
  tail -n +2 $D/whole_unannounced.out
} | diff -u - "$OUT/pm_whole_late.out" || exit 1

# a whole interval beginning after a begin made while disabled (still
# open): that begin holds the queries back, no announce needed
$T run $D/whole_recent.tq --format csv --replay $D/whole_recent.trace >"$OUT/pm_whole_recent_text.csv" 2>&1 || exit 1
$T run $D/whole_recent.tq --format csv --pm-path build/testpm --pm reader=file=$D/whole_recent.rec \
  >"$OUT/pm_whole_recent.csv" 2>"$OUT/pm_whole_recent.err" || { echo "recent: exit $?"; cat "$OUT/pm_whole_recent.err"; exit 1; }
[ -s "$OUT/pm_whole_recent.err" ] && { echo "recent: unexpected messages:"; cat "$OUT/pm_whole_recent.err"; exit 1; }
diff -u "$OUT/pm_whole_recent_text.csv" "$OUT/pm_whole_recent.csv" || exit 1
grep -qx "10,7000000000,9000000000" "$OUT/pm_whole_recent.csv" || { echo "recent: no whole interval"; exit 1; }
grep -qx "5,10,8000000000" "$OUT/pm_whole_recent.csv" || { echo "recent: no ping in it"; exit 1; }

# two whole intervals with one begin, each announced
$T run $G/whole_late.tq --format csv --replay $D/whole_dup.trace >"$OUT/pm_whole_dup_text.csv" 2>&1 || exit 1
$T run $G/whole_late.tq --format csv --pm-path build/testpm --pm reader=file=$D/whole_dup.rec,announce \
  >"$OUT/pm_whole_dup.csv" 2>"$OUT/pm_whole_dup.err" || { echo "dup: exit $?"; cat "$OUT/pm_whole_dup.err"; exit 1; }
[ -s "$OUT/pm_whole_dup.err" ] && { echo "dup: unexpected messages:"; cat "$OUT/pm_whole_dup.err"; exit 1; }
diff -u "$OUT/pm_whole_dup_text.csv" "$OUT/pm_whole_dup.csv" || exit 1
grep -qx "B,20,3000000000,7000000000" "$OUT/pm_whole_dup.csv" || { echo "dup: no second whole interval"; exit 1; }

# a record of a kind its relation does not have (a whole event) is refused
$T run $G/whole_late.tq --format csv --pm-path build/testpm --pm reader=file=$D/whole_event.rec \
  >"$OUT/pm_whole_event.csv" 2>"$OUT/pm_whole_event.err"
rc=$?
[ $rc -eq 1 ] || { echo "event: exit $rc"; cat "$OUT/pm_whole_event.err"; exit 1; }
grep -q "record of kind 6 for the event relation Ping rejected" "$OUT/pm_whole_event.err" ||
  { echo "event: no message:"; cat "$OUT/pm_whole_event.err"; exit 1; }
grep -qx "0,-9223372036854775807," "$OUT/pm_whole_event.csv" || { echo "event: no results kept"; exit 1; }
echo ok
