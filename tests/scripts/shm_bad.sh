#!/bin/sh
# shm_bad.sh - a subject that writes garbage into its sensor segment: each
# sort is reported with a clear message, the monitor never crashes (this
# runs under AddressSanitizer), and good packets among bad ones still count.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_bad
rm -rf "$dir" && mkdir -p "$dir"
G=build/shm/garbage
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
check() { # mode expected-exit message
  timeout 60 $T run tests/shm/ping.tq --format csv --exec $G "$1" >"$dir/$1.out" 2>"$dir/$1.err"
  rc=$?
  [ $rc -eq "$2" ] || bad "$1: exit $rc (expected $2): $(cat "$dir/$1.err")"
  grep -q "Sanitizer\|runtime error" "$dir/$1.err" && bad "$1: sanitizer report"
  grep -q -- "$3" "$dir/$1.err" || bad "$1: message: $(cat "$dir/$1.err")"
}
check magic 1 "is not a tqmon sensor segment (wrong magic)"
check version 1 "sensor segment version 99, this tqmon speaks 4"
check catalog 1 "corrupt catalog (1000 sensors)"
check packets 0 "7 packets lost: .* 7 invalid: first packet of sensor 9, the subject has 2"
grep -q "^P1,High," "$dir/packets.out" || bad "packets: the good packet among the bad was lost"
# a packet of a kind its sensor does not send, and one of the wrong size,
# are invalid; the good packet after each is kept
check kind 0 "1 packets lost: .* 1 invalid: first packet of Ping of the wrong kind 2"
grep -q "^P1,High," "$dir/kind.out" || bad "kind: the good packet after the bad one was lost"
check slots 0 "1 packets lost: .* 1 invalid: first packet of Ping with 2 slots, expected 1"
grep -q "^P1,High," "$dir/slots.out" || bad "slots: the good packet after the bad one was lost"
check random 0 "invalid: first ring 0: packet of"
# a sensor of more attributes than a packet holds, even one the program
# does not declare (its packets are read); an offset outside the segment
check wide 1 "corrupt catalog (sensor 2: 19 attributes"
check offsets 1 "corrupt sensor segment header (geometry)"
# a slot of a bad size loses itself, not the packets after it
check resync 0 "1 packets lost: .* 1 invalid: first ring 0: packet of 0 slots"
[ "$(grep -c "^P1,High," "$dir/resync.out")" = 100 ] || bad "resync: $(grep -c "^P1,High," "$dir/resync.out") of the 100 good packets"
# a stamp far ahead of the clock is invalid: taken, it held the ring's
# later packets back to its time, and the run never ended
check future 0 "1 invalid: first Ping: a packet stamped 3[56][0-9][0-9]\.[0-9]* s after the monitor.s clock"
[ "$(grep -c "^P1,High," "$dir/future.out")" = 100 ] || bad "future: $(grep -c "^P1,High," "$dir/future.out") of the 100 good packets"
grep -q "^P1,Low," "$dir/future.out" && bad "future: the packet stamped an hour ahead was taken"
# a subject cannot shrink its segment under the monitor (sealed): it
# would have ended the monitor with SIGBUS
timeout 60 $T run tests/shm/ping.tq --format csv --exec $G shrink >"$dir/shrink.out" 2>"$dir/shrink.err" || bad "shrink: exit $?: $(cat "$dir/shrink.err")"
grep -q "garbage: shrink refused: Operation not permitted" "$dir/shrink.err" || bad "shrink: $(cat "$dir/shrink.err")"
[ "$(grep -c "^P1,High," "$dir/shrink.out")" = 100 ] || bad "shrink: $(grep -c "^P1,High," "$dir/shrink.out") of the 100 good packets"
# a program can shrink its own segment under a monitor attached to it (its
# /dev/shm file cannot be sealed): the monitor died of SIGBUS; it keeps
# what it answered, and says what happened (tqshmbus.h)
E=build/shm/early
$E 200 shrink 2>"$dir/ashrink.sub" &
sub=$!
for i in $(seq 200); do [ -e /dev/shm/tqmon.$sub ] && break; sleep 0.05; done
timeout 60 $T run tests/shm/subject.tq tests/shm/early.tq --attach $sub --db "$dir/ashrink.db" --quiet \
  --stats "$dir/ashrink.json" 2>"$dir/ashrink.err"
rc=$?
[ $rc -eq 0 ] || kill $sub 2>/dev/null
wait $sub
src=$?
[ $rc -eq 0 ] || bad "attach shrink: the monitor exited with $rc: $(cat "$dir/ashrink.err")"
{ [ $src -eq 0 ] && grep -q "early: shrunk" "$dir/ashrink.sub"; } || bad "attach shrink: the subject: exit $src: $(cat "$dir/ashrink.sub")"
grep -q "warning: the subject (pid $sub) shrank its sensor segment /dev/shm/tqmon.$sub (4096 of its [0-9]* bytes) under the monitor by .*: what it wrote from then on is lost; the run stopped early" "$dir/ashrink.err" ||
  bad "attach shrink: message: $(cat "$dir/ashrink.err")"
grep -q '"stopped_early": true' "$dir/ashrink.json" || bad "attach shrink: stopped_early is not true in --stats"
n=$(sqlite3 "$dir/ashrink.db" "SELECT count(DISTINCT Job) FROM Handled WHERE Worker = 'W1'" 2>&1)
[ "$n" = 200 ] || bad "attach shrink: $n of the 200 jobs W1 handled before the shrink"
# a program that cannot map its sensor words where its sensors read them
# (pages of 16 KiB) lets its segment go, and its monitor says so: it ran to
# its end with empty answers and told nothing
$T run tests/shm/subject.tq tests/shm/early.tq --db "$dir/pages.db" --quiet \
  --exec env LD_PRELOAD="$PWD/build/shm/pagesize.so" build/shm/early 50 >"$dir/pages.out" 2>"$dir/pages.err"
[ $? -eq 1 ] || bad "pages: exit status: $(cat "$dir/pages.err")"
grep -q "tqsensor: the sensor words cannot be mapped where the sensors read them (page size 16384, not 4096)" "$dir/pages.err" ||
  bad "pages: the program did not say why: $(cat "$dir/pages.err")"
grep -q "the subject exited before it mapped the sensor segment" "$dir/pages.err" || bad "pages: the monitor: $(cat "$dir/pages.err")"
# a header changed after the monitor checked it is not read again
timeout 60 $T run tests/shm/ping.tq --format csv --exec $G nrings >"$dir/nrings.out" 2>"$dir/nrings.err" || bad "nrings: exit $?: $(cat "$dir/nrings.err")"
grep -q "Sanitizer\|runtime error" "$dir/nrings.err" && bad "nrings: sanitizer report"
[ "$(grep -c "^P1,High," "$dir/nrings.out")" = 100 ] || bad "nrings: $(grep -c "^P1,High," "$dir/nrings.out") of the 100 good packets"
# a handle the monitor has seen as a string is no entity the next time
check cached 0 "1 invalid: first Ping: bad entity handle 2"
grep -q "^S," "$dir/cached.out" && bad "cached: a string was taken for an entity: $(cat "$dir/cached.out")"
grep -q "^P1,Low" "$dir/cached.out" || bad "cached: the good packet was lost: $(cat "$dir/cached.out")"
# a segment that is no segment at all: --attach to a process without one
$T run tests/shm/ping.tq --attach 1 >"$dir/attach.out" 2>"$dir/attach.err"
[ $? -eq 1 ] || bad "attach: exit status"
grep -q "no sensor segment /dev/shm/tqmon.1" "$dir/attach.err" || bad "attach: $(cat "$dir/attach.err")"
# a program that is not instrumented
$T run tests/shm/ping.tq --exec true >"$dir/plain.out" 2>"$dir/plain.err"
[ $? -eq 1 ] || bad "uninstrumented: exit status"
grep -q "the subject exited before it mapped the sensor segment" "$dir/plain.err" || bad "uninstrumented: $(cat "$dir/plain.err")"
$T run tests/shm/ping.tq --exec /nonexistent/program >"$dir/none.out" 2>"$dir/none.err"
[ $? -eq 1 ] || bad "no such program: exit status"
grep -q "cannot run /nonexistent/program: No such file or directory" "$dir/none.err" || bad "no such program: $(cat "$dir/none.err")"
[ $fails -eq 0 ]
