#!/bin/sh
# pm_load.sh - loading processor modules.  A PM not built in is NAME.so in
# a directory of the PM path (--pm-path or TQMON_PM_PATH), never in the
# current directory unless it is named; a name not found, a library that
# does not export tqmon_pm_list, a PM of another interface version (its init
# is never called), a PM whose init fails, a missing dependency and a cycle
# of dependencies are refused with a clear message and exit status 1; tqmon
# pms lists the libraries of the PM path.  Every command's output and exit
# status must equal tests/testpm/load.out.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
ROOT=$(pwd)
unset TQMON_PM_PATH
export LC_ALL=C

# run LABEL CMD...: the label, the command's output (stdout and stderr), its exit status
run() {
  echo "\$ $1"
  shift
  "$@" 2>&1
  echo "exit $?"
}
# tq ARGS...: tqmon run of the hosts query, one snapshot, CSV
tq() { "$ROOT/$T" run "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" --snapshots 1 --format csv "$@"; }

{
  run "found in the PM path" tq --pm-path build/testpm --pm hosts=
  run "a name not in the PM path" tq --pm-path build/testpm --pm nosuch
  run "no PM path" tq --pm hosts=
  run "several directories (TQMON_PM_PATH)" env TQMON_PM_PATH="/nonexistent:$ROOT/build/testpm" "$ROOT/$T" run \
    "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" --snapshots 1 --format csv --pm hosts=
  run "no path separator in a name" tq --pm-path build/testpm --pm ./hosts=
  cd build/testpm || exit 1
  run "in the PM directory, no PM path" tq --pm hosts=
  run "in the PM directory, an empty PM path" tq --pm-path : --pm hosts=
  run "in the PM directory, the PM path ." tq --pm-path . --pm hosts=
  cd "$ROOT" || exit 1
  run "another interface version" tq --pm-path build/testpm --pm badver
  run "no tqmon_pm_list" tq --pm-path build/testpm --pm nolist
  run "init fails" tq --pm-path build/testpm --pm hosts=colour=blue
  run "a dependency not loaded" tq --pm-path build/testpm --pm hosts=dep=nosuch
  run "a cycle of dependencies" tq --pm-path build/testpm --pm hosts=dep=sup --pm sup=dep=mon --pm mon=dep=hosts
  echo "\$ tqmon pms --pm-path build/testpm (libraries sorted)"
  $T pms --pm-path build/testpm | sed -n '/^in /,$p' | { read -r h; echo "$h"; sort; }
} >"$OUT/load.out"
diff -u $D/load.out "$OUT/load.out" || exit 1
echo ok
