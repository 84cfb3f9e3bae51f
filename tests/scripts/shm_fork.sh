#!/bin/sh
# shm_fork.sh - a subject with generated sensors that forks without exec
# (tests/shm/early.c N fork): the child inherits its parent's segment and
# thread state, so its sensors stay off; it must neither write into its
# parent's rings nor mark the segment exited (or remove it) when it exits.
# W1 and W2 are the parent's, whole; C1, the child's, is not recorded.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_fork
rm -rf "$dir" && mkdir -p "$dir"
E=build/shm/early
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
q() { sqlite3 "$dir/$1.db" "$2"; }

$T run tests/shm/subject.tq tests/shm/early.tq --db "$dir/fork.db" --quiet --exec $E 1000 fork 2>"$dir/fork.err" ||
  bad "run: exit $?: $(cat "$dir/fork.err")"
for w in W1 W2; do
  for r in Enqueued Handled; do
    n=$(q fork "SELECT count(DISTINCT Job) FROM $r WHERE Worker = '$w'")
    [ "$n" = 1000 ] || bad "$r: $n of the 1000 jobs of $w recorded"
  done
done
n=$(q fork "SELECT count(*) FROM Enqueued WHERE Worker = 'C1'")
[ "$n" = 0 ] || bad "the forked child's sensors wrote into its parent's segment ($n Enqueue of C1)"
grep -q "lost" "$dir/fork.err" && bad "packets lost: $(cat "$dir/fork.err")"
[ $fails -eq 0 ]
