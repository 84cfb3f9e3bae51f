#!/bin/sh
# counter_width.sh - an enable count past the width of its counter
# (`counter N`, docs/enabling.md): tests/golden/counter_saturate has four
# alphas enable Waiting on M1 at once through a 2-bit counter.  --stats
# counts one saturation (and none with `counter 8`), and the answers are the
# same with either width.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/counter_width.$$
rm -rf "$dir" && mkdir -p "$dir"
G=tests/golden/counter_saturate
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
sat() { grep '"name": "Waiting"' "$1" | sed -n 's/.*"saturated": \([0-9]*\).*/\1/p'; }
$T run $G.tq --replay $G.trace --format csv --stats "$dir/2.json" >"$dir/2.csv" 2>"$dir/2.err" || bad "counter 2: exit $?"
sed 's/counter 2;/counter 8;/' $G.tq >"$dir/8.tq"
$T run "$dir/8.tq" --replay $G.trace --format csv --stats "$dir/8.json" >"$dir/8.csv" 2>"$dir/8.err" || bad "counter 8: exit $?"
[ "$(sat "$dir/2.json")" = 1 ] || bad "counter 2: saturated $(sat "$dir/2.json") times, expected 1"
[ "$(sat "$dir/8.json")" = 0 ] || bad "counter 8: saturated $(sat "$dir/8.json") times, expected 0"
grep -q '"counter_bits": 2' "$dir/2.json" || bad "counter 2: --stats does not show the width"
diff "$dir/2.csv" "$dir/8.csv" >/dev/null || bad "the answers depend on the counter's width"
diff $G.csv "$dir/2.csv" >/dev/null || bad "the answers differ from $G.csv"
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
