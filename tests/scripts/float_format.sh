#!/bin/sh
# float_format.sh - every place a result's float is printed gives the shortest
# form that reads back exactly (issue 14.9): tables, CSV, JSON lines, `tqmon
# show` over the store, a text recording of the run, `load --csv`.  The
# golden case float_shortest has the values; 5/6 must print as
# 0.8333333333333334 (%.17g gave 0.83333333333333337).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/float_format
rm -rf "$dir" && mkdir -p "$dir"
g=tests/golden/float_shortest
fails=0
bad() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
want=0.8333333333333334
for fmt in table csv jsonl; do
  $T run $g.tq --replay $g.trace --format $fmt >"$dir/out.$fmt" 2>"$dir/err.$fmt" || bad "run --format $fmt: $(cat "$dir/err.$fmt")"
  grep -q "$want" "$dir/out.$fmt" || bad "--format $fmt: no $want: $(head -5 "$dir/out.$fmt")"
  grep -q "83333333333333337\|2.5499999\|0.1000000000000000" "$dir/out.$fmt" && bad "--format $fmt: %.17g digits"
done
grep -q "\"X\":$want," "$dir/out.jsonl" || bad "JSON lines: X is not the number $want"
$T run $g.tq --replay $g.trace --quiet --db "$dir/s.db" 2>"$dir/err.db" || bad "run --db: $(cat "$dir/err.db")"
$T show --db "$dir/s.db" Sixth >"$dir/show.csv" 2>&1 || bad "show: $(cat "$dir/show.csv")"
grep -q "$want" "$dir/show.csv" || bad "show: no $want: $(cat "$dir/show.csv")"
# a float attribute recorded and read back is the same number
printf '0 Sensor+ S1\n10 Reading+ S1 0.8333333333333334\n20 Reading- S1 0.8333333333333334\n' >"$dir/in.trace"
$T run $g.tq --replay "$dir/in.trace" --quiet --record "$dir/rec.trace" 2>"$dir/err.rec" || bad "record: $(cat "$dir/err.rec")"
grep -q " S1 $want\$" "$dir/rec.trace" || bad "recording: $(grep Reading "$dir/rec.trace")"
$T load $g.tq --replay "$dir/in.trace" --csv "$dir/csv" 2>"$dir/err.load" || bad "load --csv: $(cat "$dir/err.load")"
grep -rq "$want" "$dir/csv" || bad "load --csv: no $want"
[ $fails -eq 0 ]
