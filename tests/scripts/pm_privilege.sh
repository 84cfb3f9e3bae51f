#!/bin/sh
# pm_privilege.sh - a PM declaring a privilege this process does not have
# (read:/nonexistent/file, missing even for root) refuses the start: exit
# status 1, a message naming the PM and the privilege, no PM called at all
# (neither START nor END: no call log), nothing stored (no --db file).  A
# privilege that is there (reading the program file) lets it run.  Each case
# is compared with tests/testpm/NAME.out.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
fail=0

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
    if [ -f "$log" ]; then cat "$log"; else echo "no call"; fi
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

log=$OUT/pm_privilege.log
rm -f "$log"
check privilege --snapshots 2 \
  --pm sup=log=$log,priv=read:$D/sensors.tq+read:/nonexistent/file \
  --pm busy=log=$log \
  --pm disk=log=$log \
  --pm load=log=$log \
  --pm hosts=log=$log

log=$OUT/pm_privilege_ok.log
rm -f "$log"
check privilege_ok --snapshots 1 \
  --pm sup=log=$log,priv=read:$D/sensors.tq \
  --pm busy=log=$log \
  --pm disk=log=$log \
  --pm load=log=$log \
  --pm hosts=log=$log

[ $fail -eq 0 ] && echo ok
exit $fail
