#!/bin/sh
# shm_squat.sh - the trust model of --attach (sensors/README.md): another
# local user plants a segment under the name a victim's program will use
# (/dev/shm/tqmon.PID: the attacker's own instrumented program's segment,
# hard-linked there and made 0666).  The victim's program refuses it and
# says so; tqmon run --attach PID refuses it too, run by the victim or by
# root, instead of reporting the attacker's events.  A segment of the right
# user is refused as well when its mode is not 0600, when it has a second
# link, or when another process made it.  The test creates two users (the
# victim and the attacker) and removes them at the end; it is skipped where
# users cannot be created.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_squat
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
  echo "skipped: creating the victim and attacker users needs root, useradd and setpriv"
  exit 77
fi
vic=tqv$$
att=tqa$$
pids=""
cleanup() {
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  # (processes of the two users are this test's own)
  pkill -KILL -u "$vic" 2>/dev/null
  pkill -KILL -u "$att" 2>/dev/null
  for p in $pids; do rm -f "/dev/shm/tqmon.$p"; done
  i=0
  while [ $i -lt 50 ] && ! userdel "$vic" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
  i=0
  while [ $i -lt 50 ] && ! userdel "$att" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
  rm -f "$dir/go"
}
trap cleanup EXIT
if ! useradd -M -N -s /bin/sh "$vic" 2>"$dir/useradd.err" || ! useradd -M -N -s /bin/sh "$att" 2>>"$dir/useradd.err"; then
  echo "skipped: useradd failed: $(cat "$dir/useradd.err")"
  exit 77
fi
# "$AV CMD" runs CMD as the victim, "$AA CMD" as the attacker (and $! is
# then CMD's pid)
AV="setpriv --reuid=$vic --regid=$(id -g "$vic") --clear-groups"
AA="setpriv --reuid=$att --regid=$(id -g "$att") --clear-groups"
chmod 777 "$dir"
# the binaries, the query and the test's directory must be reachable by the
# two users (not under a 0700 directory: the victim would never open its
# fifo, and the test would wait for it)
. tests/other_user.sh
reachable "$AV" "$T" "$MB" -r examples/mailbox/monitor.tq -w "$dir" || exit 77
reachable "$AA" "$MB" -w "$dir" || exit 77
# waits (10 s at most) until file $1 exists
waitfor() {
  i=0
  while [ $i -lt 200 ] && [ ! -e "$1" ]; do
    sleep 0.05
    i=$((i + 1))
  done
}

# ---------------------------------------------------------------- a planted segment
# the victim's program, stopped before it runs (its pid is known)
mkfifo -m 666 "$dir/go"
$AV sh -c "read x < '$dir/go'; exec $MB -n 1000000 -u 500 -l '$dir/victim.log'" 2>"$dir/victim.err" &
victim=$!
pids="$pids $victim"
# the attacker's own instrumented program, whose segment is planted under
# the victim's pid, readable and writable by all
$AA $MB -n 1000000 -u 500 -l "$dir/attacker.log" &
attacker=$!
pids="$pids $attacker"
waitfor /dev/shm/tqmon.$attacker
$AA ln /dev/shm/tqmon.$attacker /dev/shm/tqmon.$victim || bad "the attacker could not plant the segment"
$AA chmod 666 /dev/shm/tqmon.$attacker
# (bounded: a victim that cannot open the fifo never reads it)
timeout 60 sh -c 'echo go >"$1"' sh "$dir/go" || bad "the victim's program did not start within 60 s: $(cat "$dir/victim.err")"
i=0
while [ $i -lt 200 ] && ! grep -q SEND "$dir/victim.log" 2>/dev/null; do
  sleep 0.05
  i=$((i + 1))
done
grep -q "tqsensor: /dev/shm/tqmon.$victim exists and is not this program's (a file, owner uid $(id -u "$att"), mode 0666; this program runs as uid $(id -u "$vic")): refused, the sensors stay off" "$dir/victim.err" ||
  bad "the victim's program did not refuse the planted segment: $(cat "$dir/victim.err")"
for who in victim root; do
  A=""
  [ $who = victim ] && A=$AV
  $A $T run examples/mailbox/monitor.tq --attach $victim --snapshots 20 --format csv >"$dir/attach.$who.out" 2>"$dir/attach.$who.err"
  rc=$?
  [ $rc -eq 1 ] || bad "attach by $who to the victim: exit $rc (expected 1): $(cat "$dir/attach.$who.err")"
  grep -q "/dev/shm/tqmon.$victim is not the segment of process $victim: it belongs to uid $(id -u "$att"), and process $victim runs as uid $(id -u "$vic"): refused" "$dir/attach.$who.err" ||
    bad "attach by $who: message: $(cat "$dir/attach.$who.err")"
  grep -q "^P" "$dir/attach.$who.out" && bad "attach by $who reported the attacker's events"
done
[ -e /dev/shm/tqmon.$victim ] || bad "the planted segment was removed (only its owner may)"
kill -KILL $victim $attacker 2>/dev/null
wait $victim $attacker 2>/dev/null
$AA rm -f /dev/shm/tqmon.$victim /dev/shm/tqmon.$attacker

# ---------------------------------------------------------------- the victim's own, but not as made
$AV $MB -n 1000000 -u 500 -l "$dir/own.log" &
own=$!
pids="$pids $own"
$AV sleep 60 &
other=$!
pids="$pids $other"
waitfor /dev/shm/tqmon.$own
attach() { # PID expected-message
  $AV $T run examples/mailbox/monitor.tq --attach "$1" --snapshots 5 --quiet 2>"$dir/own.err"
  rc=$?
  [ $rc -eq 1 ] || bad "attach to $1: exit $rc (expected 1): $(cat "$dir/own.err")"
  grep -q -- "$2" "$dir/own.err" || bad "attach to $1: message: $(cat "$dir/own.err")"
}
$AV chmod 644 /dev/shm/tqmon.$own
attach $own "is not the segment of process $own: its mode is 0644, not 0600: refused"
$AV chmod 600 /dev/shm/tqmon.$own
$AV ln /dev/shm/tqmon.$own /dev/shm/tqmon.$other
attach $own "is not the segment of process $own: it has 2 links, not 1: refused"
attach $other "is not the segment of process $other: it has 2 links, not 1: refused"
$AV rm /dev/shm/tqmon.$other
$AV cp -p /dev/shm/tqmon.$own /dev/shm/tqmon.$other
attach $other "/dev/shm/tqmon.$other was made by process $own, not by $other: refused"
$AV rm -f /dev/shm/tqmon.$other
# as made, it is accepted
$AV $T run examples/mailbox/monitor.tq --attach $own --snapshots 20 --quiet --stats "$dir/own.json" 2>"$dir/own.err" ||
  bad "attach to the victim's own segment: $(cat "$dir/own.err")"
kill $own 2>/dev/null
wait $own 2>/dev/null
[ $fails -eq 0 ]
