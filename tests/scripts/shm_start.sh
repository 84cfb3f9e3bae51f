#!/bin/sh
# shm_start.sh - a subject busy from its first line under --exec
# (tests/shm/early.c: 1,000 events and 1,000 intervals per worker, as fast
# as it can): the start handshake (the subject waits until the monitor is
# ready) and entities the monitor has not seen yet reporting until it has,
# so that every one is recorded, whether a query names the worker (a
# constant) or not, and by tqmon record; a subject that does not wait says
# so.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_start
rm -rf "$dir" && mkdir -p "$dir"
E=build/shm/early
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
q() { sqlite3 "$dir/$1.db" "$2"; }

$T run tests/shm/subject.tq tests/shm/early.tq --db "$dir/all.db" --quiet --exec $E 1000 2>"$dir/all.err" ||
  bad "run: exit $?: $(cat "$dir/all.err")"
for w in W1 W2; do
  for r in Enqueued Handled; do
    n=$(q all "SELECT count(DISTINCT Job) FROM $r WHERE Worker = '$w'")
    [ "$n" = 1000 ] || bad "$r: $n of the 1000 jobs of $w recorded"
  done
done
grep -q "lost" "$dir/all.err" && bad "packets lost: $(cat "$dir/all.err")"

# a query that names the worker (enabled by a constant before it exists)
$T run tests/shm/subject.tq tests/shm/early_w1.tq --db "$dir/w1.db" --quiet --exec $E 1000 2>"$dir/w1.err" ||
  bad "run W1: exit $?: $(cat "$dir/w1.err")"
n=$(q w1 "SELECT count(DISTINCT Job) FROM EnqueuedW1")
[ "$n" = 1000 ] || bad "EnqueuedW1: $n of the 1000 jobs of W1 recorded"

# everything recorded (every sensor on every entity)
$T record tests/shm/subject.tq -o "$dir/rec.trace" --exec $E 1000 2>"$dir/rec.err" || bad "record: exit $?: $(cat "$dir/rec.err")"
n=$(grep -c ' Enqueue ' "$dir/rec.trace")
[ "$n" = 2000 ] || bad "record: $n of the 2000 Enqueue events recorded"

[ $fails -eq 0 ]
