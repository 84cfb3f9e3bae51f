#!/bin/sh
# daemon_exec.sh - the daemon's add/rm scenario (daemon.sh) on a program it
# starts (--exec): the paper's mailbox system (examples/mailbox), whose
# sensors are generated inline code testing enable words in a shared
# segment.  The words are read from the program's side (build/shm/flags
# reads the segment through /proc/PID/map_files: root only, else the test
# is skipped), not only the engine's counts:
#   - A (sends of P1, P2) and B (of P2, P3) sharing SendMessage: the segment
#     enables it on P1, P2, P3;
#   - A removed (B watched all along): on P2, P3 only, in the segment and in
#     the engine's stats; B removed: on nothing, the sensor's word 0;
#   - B's watched rows are sends of P2 and P3, and the program's log has them;
#   - the daemon stopped, the program is stopped with it.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
MB=build/mailbox/mailbox
FLAGS=build/shm/flags
for f in $MB $FLAGS; do [ -x $f ] || { echo "FAIL: $f is not built (make $f)"; exit 1; }; done
log=$OUT/daemon_exec
rm -rf "$log" && mkdir -p "$log"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-dexec.XXXXXX") || exit 1
sock=$dir/sock
cleanup() {
  [ -n "${w:-}" ] && kill "$w" 2>/dev/null
  [ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
  [ -n "${sub:-}" ] && kill "$sub" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
q() { $T query "$@" --socket "$sock"; }
stats() { q stats >"$log/stats.json" 2>"$log/stats.err" || bad "query stats: $(cat "$log/stats.err")"; }
# enabled SENSOR: the entities the engine has it enabled on, sorted, one line
enabled() {
  grep "{\"sensor\": \"$1\"" "$log/stats.json" | sed 's/.*"entities": \[\([^]]*\)\].*/\1/' | tr -d '" ' | tr ',' '\n' | sort | tr '\n' ' '
}
# seg: SendMessage's words in the program's segment, on one line
seg() { $FLAGS "$segfile" SendMessage 2>&1 | tr '\n' ' '; }
# waitseg WANT WHAT: until the segment's words are WANT (10 s at most)
waitseg() {
  k=0
  while [ "$(seg)" != "$1" ]; do
    k=$((k + 1))
    [ $k -gt 200 ] && { bad "$2: the segment says '$(seg)', not '$1'"; return 1; }
    sleep 0.05
  done
  return 0
}

$T daemon tests/daemon/mailbox.tq --socket "$sock" --stats "$log/end.json" \
  --exec $MB -n 100000000 -u 500 -l "$log/mailbox.log" 2>"$log/daemon.err" &
dpid=$!
k=0
until grep -q "serving" "$log/daemon.err" 2>/dev/null; do
  k=$((k + 1))
  [ $k -gt 600 ] && { bad "the daemon did not start: $(cat "$log/daemon.err")"; exit 1; }
  sleep 0.1
done
# the program: the daemon's child, and the descriptor of its segment
sub=$(cat /proc/$dpid/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | head -1)
[ -n "$sub" ] && [ "$(cat /proc/$sub/comm 2>/dev/null)" = mailbox ] || { bad "no mailbox program under the daemon ($sub)"; exit 1; }
# (a memfd it mapped and closed: /proc/PID/map_files, which root may open)
k=0
until range=$(grep "/memfd:tqmon-sensors" "/proc/$sub/maps" 2>/dev/null | head -1 | cut -d' ' -f1) && [ -n "$range" ]; do
  k=$((k + 1))
  [ $k -gt 200 ] && { bad "the program mapped no segment: $(cat "/proc/$sub/maps" 2>&1 | tail -3)"; exit 1; }
  sleep 0.05
done
segfile=/proc/$sub/map_files/$range
if ! $FLAGS "$segfile" SendMessage >"$log/flags0" 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "skipped: the program's segment is read through /proc/PID/map_files, which needs root ($(cat "$log/flags0"))"
    exit 77
  fi
  bad "the segment cannot be read: $(cat "$log/flags0")"
fi
waitseg "on=0 " "before any query"

# ---------------------------------------------------------------- two queries sharing SendMessage
sed -e "s/PID1/P1/" -e "s/PID2/P2/" tests/daemon/sends.tq >"$dir/a.tq"
sed -e "s/PID1/P2/" -e "s/PID2/P3/" tests/daemon/sends.tq >"$dir/b.tq"
q add "$dir/a.tq" --name A >/dev/null || bad "add A"
waitseg "on=2 P1=1 P2=1 " "A added"
q add "$dir/b.tq" --name B >/dev/null || bad "add B"
waitseg "on=3 P1=1 P2=1 P3=1 " "A and B added"
stats
[ "$(enabled SendMessage)" = "P1 P2 P3 " ] || bad "A and B: the engine has SendMessage enabled on '$(enabled SendMessage)'"
q watch B >"$log/watchB.jsonl" 2>&1 &
w=$!
k=0
until [ "$(grep -c '"op": "insert"' "$log/watchB.jsonl")" -ge 3 ]; do
  k=$((k + 1))
  [ $k -gt 600 ] && { bad "B's watcher got no 3 sends in 60 s"; break; }
  sleep 0.1
done

# ---------------------------------------------------------------- remove the first: the second's only
q rm A || bad "rm A"
stats
[ "$(enabled SendMessage)" = "P2 P3 " ] || bad "A removed: the engine has SendMessage enabled on '$(enabled SendMessage)', not B's P2 P3"
waitseg "on=2 P2=1 P3=1 " "A removed"
kill -0 $w 2>/dev/null || bad "B's watch ended when A was removed"

# ---------------------------------------------------------------- remove the second: nothing
q rm B || bad "rm B"
k=0
while kill -0 $w 2>/dev/null; do
  k=$((k + 1))
  [ $k -gt 100 ] && { bad "B's watch did not end with B"; kill $w; break; }
  sleep 0.1
done
w=""
stats
grep -q '"enabled_entities": 0,' "$log/stats.json" || bad "A and B removed: the engine has entities enabled: $(grep -A3 '"enabled"' "$log/stats.json")"
waitseg "on=0 " "A and B removed"
# B's rows: sends of P2 and P3, each one the program logged
grep '"op": "insert"' "$log/watchB.jsonl" | sed 's/.*"Process": "\([^"]*\)", "Mailbox": "\([^"]*\)".*/\1 \2/' | sort -u >"$log/bsends"
[ -s "$log/bsends" ] || bad "B's watched rows name no send"
grep -v '^P[23] ' "$log/bsends" >"$log/bother" && bad "B's rows name sends of others: $(head -3 "$log/bother")"
awk '$2 == "SEND" { print $3, $4 }' "$log/mailbox.log" | sort -u >"$log/logsends"
comm -23 "$log/bsends" "$log/logsends" >"$log/bnotlogged"
[ -s "$log/bnotlogged" ] && bad "B's rows name sends the program never logged: $(head -3 "$log/bnotlogged")"

# ---------------------------------------------------------------- the end
kill -TERM "$dpid"
wait "$dpid"
rc=$?
dpid=""
[ $rc -eq 0 ] || bad "the daemon ended with $rc: $(tail -5 "$log/daemon.err")"
k=0
while kill -0 "$sub" 2>/dev/null; do
  k=$((k + 1))
  [ $k -gt 100 ] && { bad "the program $sub goes on after the daemon ended"; break; }
  sleep 0.1
done
grep -q "lost\|invalid" "$log/daemon.err" && bad "the daemon says: $(grep "lost\|invalid" "$log/daemon.err")"
[ $fails -eq 0 ] || exit 1
echo "ok"
