#!/bin/sh
# text_limits.sh - a text recording numbers the relations of its program in
# 16 bits: 65,535 relations (the entity relations count) are read, one more
# refuses the recording with a message, exit 1 and nothing stored.  The
# program is generated (65,535 declarations).  Compiling it takes a fraction
# of a second; it took 36 s before the catalog's names were indexed and the
# statement list kept its tail (a test never fails for being slow, so a
# return to that would show as a slow test, not a failure).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/text_limits
rm -rf "$dir" && mkdir -p "$dir"
# gen N: a program of entity E and N events, a query on the last one
gen() {
  awk -v n="$1" 'BEGIN { print "entity E;"
    for (i = 0; i < n; i++) print "event R" i " (X: E initiator) traced on initiator;"
    print "range of L is R" n - 1
    print "retrieve into Last (L.X)" }'
}
gen 65534 >"$dir/max.tq"
printf '1s E+ A\n2s R65533 A\n' >"$dir/max.trace"
$T run "$dir/max.tq" --replay "$dir/max.trace" --format csv >"$dir/max.csv" 2>"$dir/max.err" ||
  { echo "FAIL: 65,535 relations: exit $?: $(cat "$dir/max.err")"; exit 1; }
printf '# Last\nX,valid_at\nA,2000000000\n' | diff -u - "$dir/max.csv" || exit 1

gen 65535 >"$dir/over.tq"
printf '1s E+ A\n2s R65534 A\n' >"$dir/over.trace"
$T run "$dir/over.tq" --replay "$dir/over.trace" --db "$dir/over.db" --quiet 2>"$dir/over.err"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: 65,536 relations: exit $rc"; exit 1; }
echo "$dir/over.trace: error: more than 65535 relations: too many for a text recording" | diff -u - "$dir/over.err" || exit 1
[ -e "$dir/over.db" ] && { echo "FAIL: 65,536 relations: a store was written"; exit 1; }
echo ok
