#!/bin/sh
# pm_trust.sh - a PM runs with the monitor's privileges, so the PM path is
# checked as a careful shell checks a PATH entry (issue 15, point 6): a
# library another user owns, one anyone may write, one in a directory anyone
# may write (without the sticky bit), or reached through a link to such a
# file, is refused with the file and its owner or mode named; a library of
# root or of the user, in a directory of theirs or a sticky one, loads; a
# relative TQMON_PM_PATH entry is refused.  The other user is uid 65534
# (nobody): files are given to it with chown, which needs root; without root
# the test is skipped.  Output (the temporary directory shown as DIR) must
# equal tests/testpm/trust.out.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
ROOT=$(pwd)
unset TQMON_PM_PATH
export LC_ALL=C
if [ "$(id -u)" != 0 ]; then
  echo "skipped: giving a library to another user (chown to uid 65534) needs root"
  exit 77
fi
[ -f build/testpm/testpm.so ] || { echo "build/testpm/testpm.so is not built (make test builds it)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
chmod 0755 "$d"
# the last case runs as uid 65534: it needs the monitor, the queries and DIR
. tests/other_user.sh
unreachable=""
AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
other=0
command -v setpriv >/dev/null 2>&1 && reachable "$AS" "$ROOT/$T" "$d" -r "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" && other=1

# run LABEL CMD...: the label, the command's output and its exit status
run() {
  echo "\$ $1"
  shift
  "$@" 2>&1
  echo "exit $?"
}
# tq DIR: tqmon run of the hosts query with PM path DIR, one snapshot, CSV
tq() { "$ROOT/$T" run "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" --snapshots 1 --format csv --pm-path "$1" --pm hosts=; }
# fresh MODE: DIR/pm, mode MODE, holding the user's own copy of the test PMs
fresh() {
  rm -rf "$d/pm"
  mkdir "$d/pm"
  chmod "$1" "$d/pm"
  cp build/testpm/testpm.so "$d/pm/hosts.so"
  chmod 0755 "$d/pm/hosts.so"
}

{
  fresh 0755
  run "the user's library in the user's directory" tq "$d/pm"
  chown 65534 "$d/pm/hosts.so"
  run "a library another user owns" tq "$d/pm"
  fresh 0755
  chmod 0757 "$d/pm/hosts.so"
  run "a library anyone may write" tq "$d/pm"
  fresh 0777
  run "the user's library in a directory anyone may write" tq "$d/pm"
  fresh 1777
  run "the user's library in a sticky directory anyone may write (as /tmp)" tq "$d/pm"
  chown 65534 "$d/pm/hosts.so"
  run "another user's library in a sticky directory anyone may write" tq "$d/pm"
  fresh 0755
  mkdir "$d/other"
  chmod 0755 "$d/other"
  mv "$d/pm/hosts.so" "$d/other/testpm.so"
  chown 65534 "$d/other/testpm.so"
  ln -s ../other/testpm.so "$d/pm/hosts.so"
  run "a link to another user's library" tq "$d/pm"
  fresh 0755
  chown 65534 "$d/pm"
  run "a directory another user owns" tq "$d/pm"
  rm -rf "$d/pm" "$d/other"
  fresh 0755
  mkdir "$d/sub"
  chmod 0777 "$d/sub"
  mv "$d/pm" "$d/sub/pm"
  run "a directory above the library that anyone may write" tq "$d/sub/pm"
  rm -rf "$d/sub"
  fresh 0755
  run "a relative TQMON_PM_PATH entry" env TQMON_PM_PATH="$d/none:build/testpm" "$ROOT/$T" run \
    "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" --snapshots 1 --format csv --pm hosts=
  run "an absolute TQMON_PM_PATH entry" env TQMON_PM_PATH="$d/none:$d/pm" "$ROOT/$T" run \
    "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" --snapshots 1 --format csv --pm hosts=
  if [ $other = 1 ]; then
    run "as another user, root's library" $AS \
      "$ROOT/$T" run "$ROOT/$D/sensors.tq" "$ROOT/$D/hosts.tq" --snapshots 1 --format csv --pm-path "$d/pm" --pm hosts=
  elif [ -z "$unreachable" ]; then
    echo "\$ as another user, root's library"
    echo "(no setpriv: not tried)"
  fi
} 2>&1 | sed "s|$d|DIR|g" >"$OUT/trust.out"
if [ -n "$unreachable" ]; then
  # every case but the last
  sed "/^\\$ as another user, root's library/,\$d" $D/trust.out | diff -u - "$OUT/trust.out" || exit 1
  echo "skipped in part: $unreachable"
  exit 77
fi
diff -u $D/trust.out "$OUT/trust.out" || exit 1
echo ok
