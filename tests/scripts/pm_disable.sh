#!/bin/sh
# pm_disable.sh - a PM that disables itself mid-run (TQ_PM_ERROR) while the
# others go on.  Each case runs a live collection with the test PMs and
# compares the call log, the results and the messages with the expected file
# tests/testpm/NAME.out:
#   disable    disk fails at its 2nd snapshot: it is not called again (but
#              is ended); mon, which depends on it, is told (DEP_DISABLED)
#              and disables itself in turn, so recs, which depends on mon, is
#              told too; load, busy and hosts go on: Loads and Tasks are
#              complete, Disks has the first snapshot only; exit status 0
#   disable_cb the same through the other functions of a PM: busy fails in
#              its 3rd sample (sup, which depends on it, is told; no more
#              samples: Tasks stops), recs in its 4th record (no more
#              records), and rows' warning at its 2nd result row is logged
#              while it goes on
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
fail=0

# check NAME ARGS...: runs tqmon run ARGS with log=$log, compares with $D/NAME.out
check() {
  name=$1
  shift
  {
    echo "== calls"
    $T run $D/sensors.tq $D/queries.tq --pm-path build/testpm --format csv "$@" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
    rc=$?
    cat "$log"
    echo "== results"
    cat "$OUT/$name.stdout"
    echo "== messages"
    cat "$OUT/$name.stderr"
    echo "== exit $rc"
  } >"$OUT/$name.out"
  diff -u "$D/$name.out" "$OUT/$name.out" || fail=1
}

log=$OUT/pm_disable.log
rm -f "$log"
check disable --snapshots 4 \
  --pm recs=log=$log,dep=mon,sync=snapshot_end \
  --pm mon=log=$log,dep=disk,deperr,sync=snapshot \
  --pm busy=log=$log \
  --pm disk=log=$log,error=2 \
  --pm load=log=$log,dep=hosts \
  --pm hosts=log=$log

log=$OUT/pm_disable_cb.log
rm -f "$log"
check disable_cb --snapshots 4 \
  --pm rows=log=$log,warn=result2 \
  --pm recs=log=$log,error=record4 \
  --pm sup=log=$log,dep=busy \
  --pm busy=log=$log,error=sample3 \
  --pm disk=log=$log \
  --pm load=log=$log \
  --pm hosts=log=$log

[ $fail -eq 0 ] && echo ok
exit $fail
