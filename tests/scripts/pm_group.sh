#!/bin/sh
# pm_group.sh - a GROUPER only loads other PMs: group (build/testpm/group.so)
# loads sup and mon from testpm.so, which then take part in the collection
# (sup at START and END only, mon at its synchronisation points), as their
# debug messages show (--trace-level 3).  Without the grouper neither is
# loaded (--pm progress there is a built-in PM, only to have one).  The
# program has no query: a collection needs only its timer.  The output must
# equal tests/testpm/group.out.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
{
  echo "\$ --pm group"
  $T run $D/sensors.tq --pm-path build/testpm --snapshots 2 --trace-level 3 --pm group 2>&1
  echo "exit $?"
  echo "\$ --pm progress (no grouper)"
  $T run $D/sensors.tq --pm-path build/testpm --snapshots 2 --trace-level 3 --pm progress 2>&1
  echo "exit $?"
} >"$OUT/group.out"
diff -u $D/group.out "$OUT/group.out" || exit 1
echo ok
