#!/bin/sh
# exec_output.sh - the --exec program's standard output is not in the
# result stream (issue 14.13): the mailbox program prints a line per
# operation ("1 SEND P1 M5").  With the results in a file (or a pipe) its
# lines go to tqmon's standard error; with --exec-output FILE they go to
# FILE; the results hold results only, and the same ones either way.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/exec_output
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
MB=build/mailbox/mailbox
[ -x $MB ] || { echo "FAIL: $MB is not built (make test builds it)"; exit 1; }
# the mailbox's own lines: "N SEND|WAIT|... P M"
sub='^[0-9][0-9]* [A-Z][A-Z]* P[0-9]'
$T run examples/mailbox/monitor.tq --format csv --exec $MB -n 300 >"$dir/a.csv" 2>"$dir/a.err" || bad "run: exit $?: $(tail -3 "$dir/a.err")"
grep -q "$sub" "$dir/a.csv" && bad "the program's output is in the results: $(grep "$sub" "$dir/a.csv" | head -2)"
[ "$(grep -c "$sub" "$dir/a.err")" -ge 300 ] || bad "the program's lines (300 jobs) are not on standard error: $(grep -c "$sub" "$dir/a.err")"
grep -q '^# RunningOnEvery10Ticks' "$dir/a.csv" || bad "no results: $(head -3 "$dir/a.csv")"

$T run examples/mailbox/monitor.tq --format csv --exec-output "$dir/b.out" --exec $MB -n 300 >"$dir/b.csv" 2>"$dir/b.err" ||
  bad "run --exec-output: exit $?: $(tail -3 "$dir/b.err")"
[ "$(grep -c "$sub" "$dir/b.out")" -ge 300 ] || bad "--exec-output: $(grep -c "$sub" "$dir/b.out") lines (300 jobs) in the file"
grep -q "$sub" "$dir/b.csv" "$dir/b.err" && bad "--exec-output: the program's lines elsewhere too"
grep -q '^# RunningOnEvery10Ticks' "$dir/b.csv" || bad "--exec-output: no results"

$T run examples/mailbox/monitor.tq --replay examples/paper/paper.trace --exec-output "$dir/c.out" >/dev/null 2>"$dir/c.err"
[ $? -eq 2 ] || bad "--exec-output without --exec: not a usage error"
[ $fails -eq 0 ] || exit 1
echo "ok: the --exec program's output stays out of the results"
