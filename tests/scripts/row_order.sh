#!/bin/sh
# row_order.sh - a run stores its rows in the same order every time.  Many
# intervals wait in sigmaT (the window is not reached yet) and in piT (the
# end is not known yet) and are decided in one flush; they used to come out
# in the order of their addresses, so each run stored the rows (SQLite
# rowid order) differently.  Five runs must store the same rows in the same
# order.  The release build runs them: its allocator places tuples at
# addresses that change from run to run (ASan's does not), so the test can
# see an order that follows them; the ASan build runs once more.
set -u
T=${R:-build/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/row_order
rm -rf "$dir" && mkdir -p "$dir"
cat >"$dir/q.tq" <<'TQ'
clock 1s;
entity E;
interval Iv (X: E performer, N: int) traced on performer;
range of I is Iv
retrieve into W (I.X, I.N) when I overlap (0:00:50 extend 0:01:00)
retrieve into V (I.X, I.N) valid from begin of I to (end of I) - 1
TQ
awk 'BEGIN { for (k = 1; k <= 60; k++) print "1s E+ P" k
  for (k = 1; k <= 60; k++) print 1 + k "s Iv+ P" k " " k
  for (k = 1; k <= 60; k++) print "100s Iv- P" k " " k }' >"$dir/t.trace"
for i in 1 2 3 4 5; do
  rm -f "$dir/o.db"
  $T run "$dir/q.tq" --replay "$dir/t.trace" --quiet --db "$dir/o.db" 2>"$dir/err" || { echo "FAIL: run $i: $(cat "$dir/err")"; exit 1; }
  sqlite3 "$dir/o.db" "select * from W; select '--'; select * from V" >"$dir/rows$i" || exit 1
done
n=$(grep -c . "$dir/rows1")
[ "$n" -eq 119 ] || { echo "FAIL: $n rows stored, expected 119 (58 + a separator + 60)"; exit 1; }
rm -f "$dir/o.db"
${A:-build/asan/tqmon} run "$dir/q.tq" --replay "$dir/t.trace" --quiet --db "$dir/o.db" 2>"$dir/err" || { echo "FAIL: ASan run: $(cat "$dir/err")"; exit 1; }
sqlite3 "$dir/o.db" "select * from W; select '--'; select * from V" >"$dir/rows6" || exit 1
for i in 2 3 4 5 6; do
  cmp -s "$dir/rows1" "$dir/rows$i" || { echo "FAIL: run $i stored its rows in another order"; diff "$dir/rows1" "$dir/rows$i" | head -5; exit 1; }
done
