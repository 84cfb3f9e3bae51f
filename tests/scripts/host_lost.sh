#!/bin/sh
# host_lost.sh - never silent: a /proc file of a process that is there but
# cannot be read is a lost sample, and the answer says it may be
# incomplete (docs/losses.md).  The run asks for the I/O of process 1 as a
# user who may not read /proc/1/io (another user's process: the kernel
# refuses it), and for its state, which anyone may read.  Io's answer is
# empty and marked (the warning, _tqmon_incomplete, "lost=" in the PM's
# message); the state's answer is whole and unmarked.  A process that is
# gone is no loss (host_ends.sh).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-host_lost.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 777 "$dir"
AS=""
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "skipped: no setpriv to run as another user than root"; exit 77; }
  AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
  $AS test -x "$T" || { echo "skipped: $T is not reachable by uid 65534"; exit 77; }
fi
# (the check the kernel makes: process 1 must not be ours)
if $AS cat /proc/1/io >/dev/null 2>&1; then
  echo "skipped: /proc/1/io is readable here (process 1 is this user's)"
  exit 77
fi
cat >"$dir/q.tq" <<'EOF'
range of I is Io
retrieve into OneIo (I.ReadBytes) where I.Process = "1"
range of S is ProcessState
retrieve into OneState (S.State) where S.Process = "1"
EOF
N=3
$AS $T run --host sensors/host.tq "$dir/q.tq" --snapshots $N --db "$dir/run.db" --quiet --stats "$dir/run.json" \
  2>"$dir/run.err"
rc=$?
cat "$dir/run.err"
[ $rc -eq 0 ] || bad "run: exit $rc"
io=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM OneIo")
st=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM OneState")
[ "$io" = 0 ] || bad "OneIo has $io rows: /proc/1/io was readable after all"
[ "$st" = $N ] || bad "OneState has $st rows, not $N"
periods=$(sqlite3 "$dir/run.db" "SELECT count(*) || ' ' || coalesce(sum(lost), 0) FROM _tqmon_incomplete WHERE result = 'OneIo' AND relation = 'Io' AND entity = '1'")
[ "$periods" = "1 $N" ] || bad "_tqmon_incomplete for OneIo: $periods (periods, samples lost), not 1 $N: $(sqlite3 "$dir/run.db" "SELECT * FROM _tqmon_incomplete")"
[ "$(sqlite3 "$dir/run.db" "SELECT count(*) FROM _tqmon_incomplete WHERE result = 'OneState'")" = 0 ] ||
  bad "OneState is marked incomplete"
grep -q "tqmon: warning: OneIo may be incomplete from .*: $N packets of Io lost" "$dir/run.err" ||
  bad "no warning that OneIo may be incomplete"
grep -q "OneState may be incomplete" "$dir/run.err" && bad "OneState said to be incomplete"
grep -q "\"name\": \"host_io\".*\"message\": \"reads=$N failed=$N lost=$N pids=1 \[1\]\"" "$dir/run.json" ||
  bad "host_io's message: $(grep '"host_io"' "$dir/run.json")"
[ $fails -eq 0 ]
