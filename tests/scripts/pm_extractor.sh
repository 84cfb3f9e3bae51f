#!/bin/sh
# pm_extractor.sh - a client-defined EXTRACTOR replays a recording: the test
# PM reader (tests/testpm/sources.c) reads tests/testpm/paper.rec, the
# paper's recording (examples/paper/paper.trace) in a format of its own.
# The paper's queries and tests/testpm/reader.tq over it must give exactly
# what they give over the text recording, and tests/testpm/reader.csv.  The
# call log must equal reader.log: one extract per snapshot (the records
# before the base tick after the first one, then g->advance to that tick),
# SNAPSHOT to a monitor after each, DONE with the last records, g->now the
# recording's time.  A bad line ends the extraction with the PM's message
# and exit status 1, the results so far kept (reader_bad.out).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
P=examples/paper
log=$OUT/pm_extractor.log
rm -f "$log"
# run NAME ARGS...: the paper's queries and reader.tq, CSV to $OUT/pm_extractor_NAME.csv, no messages
run() {
  name=$1
  shift
  $T run $P/paper.tq $P/queries.tq $D/reader.tq --format csv "$@" >"$OUT/pm_extractor_$name.csv" 2>"$OUT/pm_extractor_$name.err"
  rc=$?
  [ $rc -eq 0 ] || { echo "$name: exit $rc"; cat "$OUT/pm_extractor_$name.err"; exit 1; }
  [ -s "$OUT/pm_extractor_$name.err" ] && { echo "$name: unexpected messages:"; cat "$OUT/pm_extractor_$name.err"; exit 1; }
}
run text --replay $P/paper.trace
run reader --pm-path build/testpm --pm reader=file=$D/paper.rec,log=$log --pm mon=log=$log,sync=snapshot
diff -u "$OUT/pm_extractor_text.csv" "$OUT/pm_extractor_reader.csv" || exit 1
diff -u $D/reader.csv "$OUT/pm_extractor_reader.csv" || exit 1
diff -u $D/reader.log "$log" || exit 1

# with the range given at START (g->set_range) the Clock ticks from the
# first record, as over the text recording; without it, from 0
$T run $P/paper.tq $D/ticks.tq --format csv --replay $P/paper.trace >"$OUT/pm_extractor_ticks_text.csv" 2>&1 || exit 1
$T run $P/paper.tq $D/ticks.tq --format csv --pm-path build/testpm --pm reader=file=$D/paper.rec,range \
  >"$OUT/pm_extractor_ticks_range.csv" 2>&1 || exit 1
diff -u "$OUT/pm_extractor_ticks_text.csv" "$OUT/pm_extractor_ticks_range.csv" || exit 1
$T run $P/paper.tq $D/ticks.tq --format csv --pm-path build/testpm --pm reader=file=$D/paper.rec \
  >"$OUT/pm_extractor_ticks_norange.csv" 2>&1 || exit 1
grep -qx "1,0" "$OUT/pm_extractor_ticks_norange.csv" || { echo "no range: no tick at 0"; exit 1; }
grep -qx "1,0" "$OUT/pm_extractor_ticks_range.csv" && { echo "range: a tick at 0"; exit 1; }
# a range given after the first records is refused with a warning, and the
# run goes on as without one
$T run $P/paper.tq $D/ticks.tq --format csv --pm-path build/testpm --pm reader=file=$D/paper.rec,range=late \
  >"$OUT/pm_extractor_ticks_late.csv" 2>"$OUT/pm_extractor_ticks_late.err" || { echo "late range: exit $?"; exit 1; }
grep -q "warning: set_range ignored: only an extraction, before its first record" "$OUT/pm_extractor_ticks_late.err" ||
  { echo "late range: no warning:"; cat "$OUT/pm_extractor_ticks_late.err"; exit 1; }
diff -u "$OUT/pm_extractor_ticks_norange.csv" "$OUT/pm_extractor_ticks_late.csv" || exit 1

$T run $P/paper.tq $D/reader.tq --format csv --pm-path build/testpm --pm reader=file=$D/bad.rec \
  >"$OUT/pm_extractor_bad.csv" 2>"$OUT/pm_extractor_bad.err"
echo "exit $?" | cat - "$OUT/pm_extractor_bad.err" "$OUT/pm_extractor_bad.csv" >"$OUT/pm_extractor_bad.out"
diff -u $D/reader_bad.out "$OUT/pm_extractor_bad.out" || exit 1
echo ok
