#!/bin/sh
# daemon_restart.sh - a daemon restarted on the same --db keeps what was
# stored (issue 20; never lose an answer).  The first daemon stores the
# rows of query A and is stopped (SIGTERM); the second, on the same store,
# finds A's table as it was, and the query added again under that name
# goes on after those rows (the same columns: appended, never dropped);
# removed, the table it continued stays; a query of other columns under
# that name is refused with the reason, and the rows stay.
# Query B (the sleep process's lifetime, an interval still open) shows what
# becomes of a row open when a daemon stops: closed at the stop time and
# listed in _tqmon_cut ("stopped"), so the restarted daemon's row for the
# same process is the only open one; a daemon killed (SIGKILL) cannot close
# its rows, and the next one on the store closes them at the last time a
# row was stored ("not stopped"); removed, its open row is closed too
# ("removed").
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
[ -r /proc/self/stat ] || { echo "no /proc here"; exit 77; }
log=$OUT/daemon_restart
rm -rf "$log" && mkdir -p "$log"
dir=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-restart.XXXXXX") || exit 1
sock=$dir/sock
db=$dir/s.db
dpid=""
cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  [ -n "${sp:-}" ] && kill "$sp" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
sleep 600 &
sp=$!
waitcomm "$sp" sleep || { echo "FAIL: sleep $sp did not start"; exit 1; }
sed -e "s/PID1/$sp/" -e "s/PID2/$sp/" tests/daemon/pair.tq >"$dir/a.tq"
printf 'range of S is ProcessState\nretrieve (S.Process, S.Command) where S.Process = "%s"\n' "$sp" >"$dir/other.tq"
printf 'range of P is Process\nretrieve (P.Process, P.Command) where P.Process = "%s"\n' "$sp" >"$dir/b.tq"

q() { $T query "$@" --socket "$sock"; }
# start N: a daemon on $db (its log $log/daemonN.err)
start() {
  sock=$dir/sock$1
  $T daemon tests/daemon/base.tq sensors/host.tq --host --socket "$sock" --db "$db" 2>"$log/daemon$1.err" &
  dpid=$!
  k=0
  until grep -q "serving" "$log/daemon$1.err" 2>/dev/null; do
    k=$((k + 1))
    [ $k -gt 600 ] && { bad "daemon $1 did not start: $(cat "$log/daemon$1.err")"; exit 1; }
    sleep 0.1
  done
}
stop() {
  kill -TERM "$dpid"
  wait "$dpid" || bad "daemon $1 ended with $?: $(cat "$log/daemon$1.err")"
  dpid=""
}
count() { sqlite3 "$db" "SELECT count(*) FROM A" 2>&1; }
openb() { sqlite3 "$db" "SELECT count(*) FROM B WHERE valid_to IS NULL" 2>&1; }
# waitopenb: until B has an open row (60 s at most)
waitopenb() {
  k=0
  while [ "$(openb)" != 1 ]; do
    k=$((k + 1))
    [ $k -gt 240 ] && { bad "B has $(openb) open rows after 60 s, not 1"; return 1; }
    sleep 0.25
  done
}
# waitcount N: until A's table has more than N rows (60 s at most)
waitcount() {
  k=0
  while [ "$(count)" -le "$1" ] 2>/dev/null; do
    k=$((k + 1))
    [ $k -gt 240 ] && { bad "A has no more than $1 rows after 60 s"; return 1; }
    sleep 0.25
  done
}

# ---------------------------------------------------------------- the first daemon
start 1
q add "$dir/a.tq" --name A --persistent-collection >"$log/add1.out" 2>&1 || bad "add A: $(cat "$log/add1.out")"
q add "$dir/b.tq" --name B --persistent-collection >"$log/addb1.out" 2>&1 || bad "add B: $(cat "$log/addb1.out")"
waitcount 3
waitopenb
stop 1
[ "$(openb)" = 0 ] || bad "B's row open when the first daemon stopped is still open"
[ "$(sqlite3 "$db" "SELECT count(*) FROM _tqmon_cut JOIN B ON B.rowid = _tqmon_cut.row WHERE result = 'B' AND why = 'stopped' AND _tqmon_cut.valid_to = B.valid_to")" = 1 ] ||
  bad "B's row is not listed in _tqmon_cut as stopped: $(sqlite3 "$db" "SELECT * FROM _tqmon_cut" 2>&1)"
n1=$(count)
last1=$(sqlite3 "$db" "SELECT max(valid_at) FROM A")
echo "the first daemon stored $n1 rows of A"

# ---------------------------------------------------------------- restarted on the same store
start 2
[ "$(count)" = "$n1" ] || bad "the restarted daemon changed A's table: $(count) rows, not $n1"
q add "$dir/a.tq" --name A --persistent-collection >"$log/add2.out" 2>&1 || bad "add A again: $(cat "$log/add2.out")"
q add "$dir/b.tq" --name B --persistent-collection >"$log/addb2.out" 2>&1 || bad "add B again: $(cat "$log/addb2.out")"
waitcount "$n1"
waitopenb
[ "$(sqlite3 "$db" "SELECT count(*) FROM B")" = 2 ] || bad "B: $(sqlite3 "$db" "SELECT count(*) FROM B") rows after the restart, not 2"
kept=$(sqlite3 "$db" "SELECT count(*) FROM A WHERE valid_at <= $last1")
[ "$kept" = "$n1" ] || bad "A added again after the restart: $kept of the first daemon's $n1 rows are left"
[ "$(sqlite3 "$db" "SELECT count(*) FROM A WHERE valid_at > $last1")" -gt 0 ] || bad "A added again stored nothing new"
# removed (no persistent data): the table it continued stays
q rm A || bad "rm A"
[ "$(sqlite3 "$db" "SELECT count(*) FROM A WHERE valid_at <= $last1")" = "$n1" ] ||
  bad "removing A dropped the rows of the first daemon: $(count)"
n2=$(count)
# other columns under that name: refused, the rows stay
q add "$dir/other.tq" --name A >"$log/other.out" 2>"$log/other.err"
rc=$?
[ $rc -eq 1 ] || bad "a query of other columns named A: exit $rc, not 1"
grep -q "s.db: error: holds a table A of other columns (Process TEXT, State TEXT, Command TEXT, phase TEXT, valid_at INTEGER), not this query's (Process TEXT, Command TEXT, phase TEXT, valid_at INTEGER): its rows are kept; choose another name, or drop that table first" "$log/other.err" ||
  bad "a query of other columns named A: $(cat "$log/other.err")"
[ "$(count)" = "$n2" ] || bad "the refused query changed A's table: $(count) rows, not $n2"
stop 2
[ "$(openb)" = 0 ] || bad "B's row open when the second daemon stopped is still open"

# ---------------------------------------------------------------- killed: its open rows closed by the next one
start 3
q add "$dir/b.tq" --name B --persistent-collection >"$log/addb3.out" 2>&1 || bad "add B (3): $(cat "$log/addb3.out")"
waitopenb
kill -KILL "$dpid"
wait "$dpid" 2>/dev/null
dpid=""
[ "$(openb)" = 1 ] || bad "the killed daemon's row of B: $(openb) open rows, not 1"
last=$(sqlite3 "$db" "SELECT max(max(valid_from), max(valid_to)) FROM B")
start 4
q add "$dir/b.tq" --name B --persistent-collection >"$log/addb4.out" 2>&1 || bad "add B (4): $(cat "$log/addb4.out")"
[ "$(sqlite3 "$db" "SELECT count(*) FROM _tqmon_cut WHERE result = 'B' AND why = 'not stopped' AND valid_to = $last")" = 1 ] ||
  bad "the killed daemon's open row is not closed at $last: $(sqlite3 "$db" "SELECT * FROM _tqmon_cut" 2>&1)"
waitopenb
# removed: the row of the table it continued is closed ("removed"); a query
# whose table goes with it leaves no mark
q add "$dir/b.tq" --name C >"$log/addc4.out" 2>&1 || bad "add C: $(cat "$log/addc4.out")"
k=0
until [ "$(sqlite3 "$db" "SELECT count(*) FROM C WHERE valid_to IS NULL" 2>/dev/null)" = 1 ] || [ $k -gt 240 ]; do
  k=$((k + 1))
  sleep 0.25
done
q rm C || bad "rm C"
q rm B || bad "rm B"
[ "$(openb)" = 0 ] || bad "B removed: $(openb) open rows"
[ "$(sqlite3 "$db" "SELECT count(*) FROM _tqmon_cut WHERE result = 'B' AND why = 'removed'")" = 1 ] ||
  bad "B removed: its open row is not listed as removed: $(sqlite3 "$db" "SELECT * FROM _tqmon_cut" 2>&1)"
[ "$(sqlite3 "$db" "SELECT count(*) FROM _tqmon_cut WHERE result = 'C'")" = 0 ] || bad "C's table is dropped, but _tqmon_cut lists its rows"
stop 4
[ $fails -eq 0 ] || exit 1
echo "ok"
