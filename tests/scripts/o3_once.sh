#!/bin/sh
# o3_once.sh - O3's consuming form (rule O3-ONCE, docs/enabling.md).
# 1. Where it is exact (tests/golden/o3_once: Deleted declared once, and
#    so it is): the same answer as the persistent form (--no-rule O3-ONCE)
#    and the same packets delivered: the consuming form saves none.
# 2. The counter-example (tests/o3/: `once` declared on recordings that
#    break it): the consuming form misses tuples of TQuel's answer, which
#    the SQL oracle and the persistent form give; the run warns.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/o3_once.$$
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
field() { # stats-file sensor field
  grep "\"name\": \"$2\"" "$1" | sed -n "s/.*\"$3\": \\([a-z0-9]*\\).*/\\1/p"
}
G=tests/golden/o3_once
$T explain --trace $G.tq | grep -q '^O3-ONCE: ' || bad "O3-ONCE does not fire on $G.tq"
$T run $G.tq --replay $G.trace --format csv --stats "$dir/once.json" >"$dir/once.csv" 2>"$dir/once.err" || bad "once: exit $?"
$T run $G.tq --replay $G.trace --format csv --stats "$dir/pers.json" --no-rule O3-ONCE >"$dir/pers.csv" 2>"$dir/pers.err" ||
  bad "persistent: exit $?"
diff $G.csv "$dir/once.csv" >/dev/null || bad "consuming form: not the expected answer"
diff $G.csv "$dir/pers.csv" >/dev/null || bad "persistent form: not the expected answer"
[ "$(field "$dir/once.json" Deleted delivered)" = "$(field "$dir/pers.json" Deleted delivered)" ] ||
  bad "packets delivered differ: $(field "$dir/once.json" Deleted delivered) consuming, $(field "$dir/pers.json" Deleted delivered) persistent"
[ "$(field "$dir/once.json" Deleted twice)" = 0 ] || bad "the golden recording breaks once"
grep -q . "$dir/once.err" && bad "once: unexpected messages: $(cat "$dir/once.err")"
# the counter-example
W=tests/o3/wrong_once
$T run $W.tq --replay $W.trace --format csv --stats "$dir/w.json" >"$dir/w.csv" 2>"$dir/w.err" || bad "wrong: exit $?"
$T run $W.tq --replay $W.trace --format csv --no-rule O3-ONCE >"$dir/wp.csv" 2>/dev/null || bad "wrong, persistent: exit $?"
rm -f "$dir/w.db"
$T load $W.tq --replay $W.trace --db "$dir/w.db" 2>/dev/null || bad "load: exit $?"
$T sql $W.tq --db "$dir/w.db" >"$dir/wsql.csv" 2>/dev/null || bad "sql: exit $?"
diff "$dir/wsql.csv" "$dir/wp.csv" >/dev/null || bad "the persistent form is not TQuel's answer: $(diff "$dir/wsql.csv" "$dir/wp.csv")"
diff "$dir/wsql.csv" "$dir/w.csv" >"$dir/w.diff" && bad "the consuming form gave TQuel's answer on a recording that breaks once"
# exactly the tuples the consuming form misses: M1's second deletion, P3's release
[ "$(grep -c '^>' "$dir/w.diff")" = 0 ] || bad "the consuming form gave tuples TQuel's answer lacks: $(cat "$dir/w.diff")"
grep -q '^< M1,P3,' "$dir/w.diff" || bad "the consuming form did not miss M1's second deletion"
grep -q '^< P3,' "$dir/w.diff" || bad "the consuming form did not miss P3's release"
[ "$(field "$dir/w.json" Deleted twice)" = 1 ] || bad "Deleted: twice $(field "$dir/w.json" Deleted twice), expected 1"
[ "$(field "$dir/w.json" Waiting twice)" = 1 ] || bad "Waiting: twice $(field "$dir/w.json" Waiting twice), expected 1"
grep -q "warning: 1 tuples of Deleted came on a flag entity that had one already" "$dir/w.err" || bad "no warning: $(cat "$dir/w.err")"
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
