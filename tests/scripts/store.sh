#!/bin/sh
# store.sh - results in SQLite: the paper's example stores ResumedbyP1 and
# RunningOnEvery10Seconds as tables (times in ns, names as text); a run with a
# bad recording or a bad program stores nothing and leaves an existing store
# as it was; `tqmon show` reads a store back.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
db=$OUT/store.db
rm -f "$db" "$db-wal" "$db-shm"
$T run examples/paper/paper.tq examples/paper/queries.tq --replay examples/paper/paper.trace --db "$db" --quiet
r=$(sqlite3 "$db" 'select Process, valid_at from ResumedbyP1')
[ "$r" = "P2|10460000000000" ] || { echo "ResumedbyP1: $r"; exit 1; }
n=$(sqlite3 "$db" 'select count(*) from RunningOnEvery10Seconds')
[ "$n" = 385 ] || { echo "RunningOnEvery10Seconds: $n rows"; exit 1; }
n=$(sqlite3 "$db" "select count(*) from RunningOnEvery10Seconds where Process='P2' and Processor='B'")
[ "$n" = 241 ] || { echo "P2 on B: $n rows"; exit 1; }
m=$(sqlite3 "$db" 'pragma journal_mode')
[ "$m" = wal ] || { echo "journal mode $m"; exit 1; }
# an empty file given as the store is made a store as a new one is (its
# switch into WAL not synced: nothing to keep yet), and holds the same rows
e=$OUT/store-empty.db
rm -f "$e" "$e-wal" "$e-shm"
: >"$e"
$T run examples/paper/paper.tq examples/paper/queries.tq --replay examples/paper/paper.trace --db "$e" --quiet
[ "$(sqlite3 "$e" 'pragma journal_mode')" = wal ] || { echo "empty file: not a WAL store"; exit 1; }
[ "$(sqlite3 "$e" 'pragma integrity_check')" = ok ] || { echo "empty file: integrity"; exit 1; }
for q in ResumedbyP1 RunningOnEvery10Seconds; do
  [ "$(sqlite3 "$e" "select * from $q" | sort)" = "$(sqlite3 "$db" "select * from $q" | sort)" ] ||
    { echo "empty file: $q differs"; exit 1; }
done
# interval results: open rows have NULL valid_to
printf 'range of P is Process\nretrieve into States (P.Process, P.State)\n' >"$OUT/states.tq"
printf '0 Process+ P1 Ready\n5 Process+ P1 Running\n' >"$OUT/states.trace"
$T run examples/paper/paper.tq "$OUT/states.tq" --replay "$OUT/states.trace" --db "$db" --quiet
r=$(sqlite3 "$db" "select Process, State, valid_from, coalesce(valid_to, 'NULL') from States order by valid_from")
[ "$r" = "P1|Ready|0|5
P1|Running|5|NULL" ] || { echo "States: $r"; exit 1; }
# a bad recording: exit 1, the store is unchanged
before=$(sqlite3 "$db" 'select count(*) from RunningOnEvery10Seconds')
printf '1:00:00 Processor+ A\n0:59:00 Processor+ B\n' >"$OUT/bad.trace"
if $T run examples/paper/paper.tq examples/paper/queries.tq --replay "$OUT/bad.trace" --db "$db" --quiet 2>/dev/null; then
  echo "bad recording accepted"; exit 1
fi
after=$(sqlite3 "$db" 'select count(*) from RunningOnEvery10Seconds')
[ "$before" = "$after" ] || { echo "store changed by a failed run"; exit 1; }
# show
$T show --db "$db" ResumedbyP1 >"$OUT/show.csv"
grep -q '^P2,10460000000000$' "$OUT/show.csv" || { cat "$OUT/show.csv"; exit 1; }
echo ok
