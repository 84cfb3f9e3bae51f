#!/bin/sh
# pm_fatal.sh - a PM returning TQ_PM_FATAL stops the operation cleanly: exit
# status 1, the message names the PM, the PMs that were started are still
# told COLLECTION_END (if they asked) and END, and the results up to that
# point are shown and stored in the SQLite file given with --db (read back
# with tqmon show).  Each case is compared with tests/testpm/NAME.out:
#   fatal        disk is fatal at its 3rd snapshot of 5: the PMs after it
#                are not called at that snapshot, nor any PM at a later one;
#                Loads and Disks hold snapshots 1-2, Tasks also the Busy
#                samples of the 3rd (its Clock tick is still processed)
#   fatal_result rows is fatal at its 3rd result row, in the middle of the
#                first snapshot: that instant is completed (and stored), no
#                snapshot follows
#   fatal_start  sup is fatal at START: the PMs after it in START order
#                (among them the store) are never started nor ended, and
#                nothing is stored (no file)
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
fail=0

# check NAME ARGS...: runs tqmon run ARGS with log=$log and --db $db,
# compares the calls, results, messages, exit status and store with $D/NAME.out
check() {
  name=$1
  shift
  db=$OUT/$name.db
  rm -f "$db" "$db-wal" "$db-shm"
  {
    echo "== calls"
    $T run $D/sensors.tq $D/queries.tq --pm-path build/testpm --format csv --db "$db" "$@" \
      >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
    rc=$?
    [ -f "$log" ] && cat "$log"
    echo "== results"
    cat "$OUT/$name.stdout"
    echo "== messages"
    cat "$OUT/$name.stderr"
    echo "== exit $rc"
    echo "== stored"
    if [ -e "$db" ]; then $T show --db "$db" Loads Disks Tasks 2>&1; else echo "no store"; fi
  } >"$OUT/$name.out"
  diff -u "$D/$name.out" "$OUT/$name.out" || fail=1
}

log=$OUT/pm_fatal.log
rm -f "$log"
check fatal --snapshots 5 \
  --pm mon=log=$log,sync=snapshot+collection_end \
  --pm busy=log=$log \
  --pm disk=log=$log,fatal=3 \
  --pm load=log=$log,dep=hosts \
  --pm hosts=log=$log

log=$OUT/pm_fatal_result.log
rm -f "$log"
check fatal_result --snapshots 5 \
  --pm rows=log=$log,fatal=result3 \
  --pm busy=log=$log \
  --pm disk=log=$log \
  --pm load=log=$log \
  --pm hosts=log=$log

log=$OUT/pm_fatal_start.log
rm -f "$log"
check fatal_start --snapshots 5 \
  --pm mon=log=$log,sync=prebaseline+collection_end \
  --pm sup=log=$log,fatal=start,dep=load \
  --pm busy=log=$log \
  --pm disk=log=$log \
  --pm load=log=$log,dep=hosts \
  --pm hosts=log=$log

[ $fail -eq 0 ] && echo ok
exit $fail
