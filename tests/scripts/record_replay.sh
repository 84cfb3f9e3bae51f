#!/bin/sh
# record_replay.sh - what a run collects replays to the same results
# (sensors/README.md, "Consumers": the entities, the begins and ends of the
# traced relations the run holds, the delivered events, the samples).  For
# every golden case: run it with --record into a collection file and into a
# text, then replay each recording; the results are the golden ones each
# time, and the replays warn of nothing the run did not.  Golden case
# sensor_other_only: queries that read only a relation's other traced
# sensor, which a replay answers from the relation's records (its
# recording held none of them, and its replay answered nothing).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/record_replay
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cases=0
for tq in tests/golden/*.tq; do
  n=${tq%.tq}
  name=$(basename "$n")
  extra=""
  [ -f "$n.args" ] && extra=$(cat "$n.args")
  d=$dir/$name
  for rec in col trace; do
    # shellcheck disable=SC2086
    if ! $T run $extra "$tq" --replay "$n.trace" --format csv --record "$d.$rec" >"$d.run.$rec" 2>"$d.run.$rec.err"; then
      bad "$name: the run recording into .$rec: $(head -n 3 "$d.run.$rec.err")"
      continue
    fi
    cmp -s "$d.run.$rec" "$n.csv" || bad "$name: the run recording into .$rec answers differently from the golden results"
    # shellcheck disable=SC2086
    if ! $T run $extra "$tq" --replay "$d.$rec" --format csv >"$d.replay.$rec" 2>"$d.replay.$rec.err"; then
      bad "$name: the replay of the .$rec the run recorded: $(head -n 3 "$d.replay.$rec.err")"
      continue
    fi
    cmp -s "$d.replay.$rec" "$n.csv" || bad "$name: the replay of the .$rec the run recorded differs from the golden results"
    grep 'warning' "$d.replay.$rec.err" | while read -r w; do
      grep -qF -- "$w" "$d.run.$rec.err" || echo "$w"
    done >"$d.newwarn.$rec"
    [ -s "$d.newwarn.$rec" ] && bad "$name: the replay of the .$rec warns of what the run did not: $(head -n 2 "$d.newwarn.$rec")"
  done
  cases=$((cases + 1))
done
[ "$cases" -gt 150 ] || bad "only $cases golden cases"
[ $fails = 0 ] && echo "record_replay: $cases golden cases, each run's recordings (binary and text) replay to its results"
exit $((fails > 0))
