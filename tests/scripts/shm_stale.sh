#!/bin/sh
# shm_stale.sh - a program with generated sensors that is killed (SIGKILL,
# or a SIGTERM it does not catch) cannot remove its segment
# /dev/shm/tqmon.PID: 91 MB of memory until someone does.  Who does
# (sensors/tqshmgc.h): the next such program of the user as it makes its
# own segment, a monitor that attaches (to any program), and the monitor
# attached to the program when it dies.  What is never removed: a segment
# of a live process, another user's file, a file with a second link, a
# name that is not tqmon.PID.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_stale
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
pids=""
planted=""
cleanup() {
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done
  for p in $pids; do
    wait "$p" 2>/dev/null
    rm -f "/dev/shm/tqmon.$p"
  done
  for f in $planted; do rm -f "$f"; done
}
trap cleanup EXIT
# waits (10 s at most) until file $1 exists
waitfor() {
  i=0
  while [ $i -lt 200 ] && [ ! -e "$1" ]; do
    sleep 0.05
    i=$((i + 1))
  done
}
# starts the program in the background (it runs until killed): $sub
start() {
  $MB -n 100000000 -u 2000 -l "$dir/$1.log" &
  sub=$!
  pids="$pids $sub"
  waitfor /dev/shm/tqmon.$sub
  [ -e /dev/shm/tqmon.$sub ] || bad "$1: the program made no segment"
}
# kills it; its segment stays (it could not remove it)
killed() {
  kill -KILL "$1"
  wait "$1" 2>/dev/null
  [ -e /dev/shm/tqmon.$1 ] || bad "the killed program $1 left no segment to remove (the test proves nothing)"
}
# a pid no process has (a shell that ended)
deadpid() {
  sh -c 'exit 0' &
  d=$!
  wait $d
  echo $d
}

# ---------------------------------------------------------------- the next program removes it
start a
a=$sub
killed $a
# what must stay: a live process's segment (its own), another user's file
# and a file with two links under dead pids, and other names
start live
live=$sub
d1=$(deadpid)
d2=$(deadpid)
d3=$(deadpid)
if [ "$(id -u)" = 0 ]; then
  : >/dev/shm/tqmon.$d1
  chown 65534 /dev/shm/tqmon.$d1
  planted="$planted /dev/shm/tqmon.$d1"
fi
: >/dev/shm/tqmon.$d2
ln /dev/shm/tqmon.$d2 "/dev/shm/tqmon.$d2.link$$"
: >"/dev/shm/tqmon.$d3.x"
planted="$planted /dev/shm/tqmon.$d2 /dev/shm/tqmon.$d2.link$$ /dev/shm/tqmon.$d3.x"
# (a short run that ends by itself: its own segment goes at its exit)
$MB -n 2 -u 0 -l "$dir/next.log" 2>"$dir/next.err" || bad "the next program: $(cat "$dir/next.err")"
[ -e /dev/shm/tqmon.$a ] && bad "the next program did not remove the segment of the killed program $a"
[ -e /dev/shm/tqmon.$live ] || bad "the next program removed the segment of the live program $live"
[ "$(id -u)" = 0 ] && { [ -e /dev/shm/tqmon.$d1 ] || bad "another user's tqmon.$d1 was removed"; }
[ -e /dev/shm/tqmon.$d2 ] || bad "a tqmon.$d2 with two links was removed"
[ -e "/dev/shm/tqmon.$d3.x" ] || bad "tqmon.$d3.x (not a segment's name) was removed"

# ---------------------------------------------------------------- a monitor that attaches removes it
start b
b=$sub
killed $b
$T run examples/mailbox/monitor.tq --attach $live --snapshots 5 --quiet 2>"$dir/attach.err" || bad "attach: $(cat "$dir/attach.err")"
[ -e /dev/shm/tqmon.$b ] && bad "the monitor attaching to $live did not remove the segment of the killed program $b"
[ -e /dev/shm/tqmon.$live ] || bad "the monitor removed the segment of the live program it watched"

# ---------------------------------------------------------------- the monitor of a program that dies removes it
$T run examples/mailbox/monitor.tq --attach $live --snapshots 100000 --quiet 2>"$dir/died.err" &
mon=$!
i=0
while [ $i -lt 200 ] && ! grep -q "tqmon\.$live" "/proc/$mon/maps" 2>/dev/null; do
  sleep 0.05
  i=$((i + 1))
done
sleep 0.5
kill -KILL $live
wait $live 2>/dev/null
wait $mon
rc=$?
[ $rc -eq 0 ] || bad "the monitor of the killed program: exit $rc: $(cat "$dir/died.err")"
grep -q "the subject (pid $live) .*the run stopped early" "$dir/died.err" || bad "the monitor did not say its program was killed: $(cat "$dir/died.err")"
[ -e /dev/shm/tqmon.$live ] && bad "the monitor of the killed program $live left its segment"
[ $fails -eq 0 ]
