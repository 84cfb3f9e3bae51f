#!/bin/sh
# replay_merge.sh - several recordings replayed as one, merged in time
# order (issue 14.7): the cases of tests/replay/ (README.md there), each as
# text, as collection files, through a pipe, in the reverse order and as
# the one recording `tqmon record` makes of them all.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/replay_merge
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cases=0
for tq in tests/replay/*.tq; do
  n=${tq%.tq}
  name=$(basename "$n")
  d=$dir/$name
  set --
  for f in "$n".[0-9].trace; do set -- "$@" --replay "$f"; done
  [ $# -ge 4 ] || { bad "$name: fewer than two recordings"; continue; }
  cases=$((cases + 1))
  if [ -f "$n.err" ]; then
    $T run "$tq" "$@" --db "$d.db" >"$d.out" 2>"$d.stderr"
    rc=$?
    [ $rc -eq 1 ] || bad "$name: exit $rc (expected 1)"
    [ -e "$d.db" ] && bad "$name: the store was written"
    [ -s "$d.out" ] && bad "$name: results were printed: $(head -c 200 "$d.out")"
    diff -u "$n.err" "$d.stderr" >"$d.diff" || bad "$name: the message differs: $(cat "$d.diff")"
    continue
  fi
  for mode in opt noopt; do
    flag=""
    [ $mode = noopt ] && flag=--no-opt
    $T run "$tq" "$@" --format csv $flag >"$d.$mode" 2>"$d.$mode.err" || bad "$name ($mode): exit $?: $(cat "$d.$mode.err")"
    diff -u "$n.csv" "$d.$mode" >"$d.$mode.diff" || bad "$name ($mode): $(cat "$d.$mode.diff")"
  done
  # as collection files, the first from a pipe
  set --
  k=0
  for f in "$n".[0-9].trace; do
    k=$((k + 1))
    $T convert "$tq" "$f" "$d.$k.col" 2>>"$d.conv.err" || bad "$name: convert $f"
    set -- "$@" --replay "$d.$k.col"
  done
  $T run "$tq" "$@" --format csv >"$d.col" 2>"$d.col.err" || bad "$name (collection files): $(cat "$d.col.err")"
  cmp -s "$n.csv" "$d.col" || bad "$name (collection files): $(diff "$n.csv" "$d.col" | head -20)"
  shift 2
  $T run "$tq" --replay - "$@" --format csv <"$d.1.col" >"$d.pipe" 2>"$d.pipe.err" || bad "$name (a pipe): $(cat "$d.pipe.err")"
  cmp -s "$n.csv" "$d.pipe" || bad "$name (a pipe): $(diff "$n.csv" "$d.pipe" | head -20)"
  # the reverse order: the same rows
  set --
  for f in "$n".[0-9].trace; do set -- --replay "$f" "$@"; done
  $T run "$tq" "$@" --format csv >"$d.rev" 2>"$d.rev.err" || bad "$name (reversed): $(cat "$d.rev.err")"
  [ "$(sort "$n.csv")" = "$(sort "$d.rev")" ] || bad "$name (reversed): other rows: $(diff "$n.csv" "$d.rev" | head -20)"
  # one recording of them all
  set --
  for f in "$n".[0-9].trace; do set -- "$@" --replay "$f"; done
  $T record "$tq" "$@" -o "$d.all.col" 2>"$d.all.err" || bad "$name: record the merge: $(cat "$d.all.err")"
  $T run "$tq" --replay "$d.all.col" --format csv >"$d.all" 2>>"$d.all.err" || bad "$name (merged recording): $(cat "$d.all.err")"
  cmp -s "$n.csv" "$d.all" || bad "$name (merged recording): $(diff "$n.csv" "$d.all" | head -20)"
done
[ $cases -ge 4 ] || bad "only $cases cases"
[ $fails -eq 0 ] && echo "replay_merge: $cases cases"
exit $((fails > 0))
