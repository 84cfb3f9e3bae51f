#!/bin/sh
# prop_replays.sh - the property tests' random pairs (tests/prop.c: a
# program with every collection mode and random queries, a recording with
# entities that come and go, equal and adjacent times) replayed every way
# tqmon reads a recording, each against the text replay's answer:
#   - the text replay of every record (--pm trace=full:FILE), which skips
#     nothing the queries do not need;
#   - the recording written as a collection file in groups of a few records
#     (TQMON_COLFIL_GROUP=200, so that intervals span groups whose blocks
#     are skipped), replayed selectively, with one thread, in full
#     (colfil=full:FILE), and read from a pipe (its range is known only at
#     its end);
#   - what the run collected (--record, a collection file and a text),
#     replayed;
#   - the recording split in two by relation, the entities and three
#     interval relations (Iv, Jv, Sv) as a collection file, the rest as a
#     text, merged in time order by two --replay;
#   - the collection file's replay streamed (--stream: rows as they are
#     decided), the rows it stands for (tests/stream_rows.py) against the
#     text replay's;
#   - the recording written into a pipe (tqmon record -o /dev/stdout, in
#     small groups: its header has no range) and replayed from it (its
#     range is then the records', which is the text's: it has no range
#     marks).
# prop.c checks the text replay against SQL and the unoptimized network;
# this checks that the readers that leave records out (blocks, entities,
# intervals no tick sees, changes of state of an entity kept only for
# whether it exists) answer as the one that reads them all.
# PROP_REPLAY_PAIRS pairs (default 100), from seed PROP_REPLAY_SEED (1),
# and the seeds that found a bug (below).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
P=${PROP:-build/prop}
n=${PROP_REPLAY_PAIRS:-100}
seed=${PROP_REPLAY_SEED:-1}
dir=$OUT/prop_replays
rm -rf "$dir" && mkdir -p "$dir"
fails=0
py=$(command -v python3) || echo "note: python3 is missing: the streamed way is left out"
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
"$P" -n "$n" -s "$seed" -o "$dir" -w 1 >"$dir/prop.log" 2>&1 || {
  bad "prop -w: $(cat "$dir/prop.log")"
  exit 1
}
# seeds that found a bug, among 3,000 from seed 1000: a block of a sampled
# relation whose records were all left out (intervals no tick sees) did not
# count its begins, so a later END of the stream failed (golden case
# sampled_unseen_block)
# and among 400 from seed 9000: a run that answered a relation's other
# traced sensor from its records did not collect them (--record), so the
# replay of what it collected answered nothing for it (golden case
# sensor_other_only); and a text recording of what it collected began at
# its first record, not at the run's first time (9007, golden case
# range_marks)
found="1845 2614 3594 9005 9007"
for s in $found; do
  "$P" -n 1 -s "$s" -o "$dir" -w 1 >>"$dir/prop.log" 2>&1 || bad "prop -w -s $s"
  n=$((n + 1))
done
pairs=0 rows=0
for tq in "$dir"/pair-*.tq; do
  b=${tq%.tq}
  name=$(basename "$b")
  if ! $T run "$tq" --replay "$b.trace" --format csv >"$b.text" 2>"$b.err"; then
    bad "$name: text replay: $(head -n 3 "$b.err")"
    continue
  fi
  $T run "$tq" --pm "trace=full:$b.trace" --format csv >"$b.tfull" 2>>"$b.err" || bad "$name: full text replay"
  cmp -s "$b.text" "$b.tfull" || bad "$name: the text replay answers differently from the full text one"
  if ! TQMON_COLFIL_GROUP=200 $T record "$tq" --replay "$b.trace" -o "$b.col" 2>>"$b.err"; then
    bad "$name: record: $(tail -n 3 "$b.err")"
    continue
  fi
  $T run "$tq" --replay "$b.col" --format csv >"$b.sel" 2>>"$b.err" || bad "$name: selective replay"
  cmp -s "$b.text" "$b.sel" || bad "$name: the collection file's selective replay answers differently from the text"
  $T run "$tq" --replay "$b.col" --threads 1 --format csv >"$b.sel1" 2>>"$b.err" || bad "$name: replay, one thread"
  cmp -s "$b.text" "$b.sel1" || bad "$name: the collection file's replay on one thread answers differently from the text"
  $T run "$tq" --pm "colfil=full:$b.col" --format csv >"$b.full" 2>>"$b.err" || bad "$name: full replay"
  cmp -s "$b.text" "$b.full" || bad "$name: the collection file's full replay answers differently from the text"
  if [ -n "$py" ]; then # (compared at the end, by one python)
    $T run "$tq" --replay "$b.col" --format csv --stream >"$b.stream" 2>>"$b.err" || bad "$name: replay streamed"
    echo "$b.text $b.stream" >>"$dir/streamed"
  fi
  { TQMON_COLFIL_GROUP=200 $T record "$tq" --replay "$b.trace" -o /dev/stdout 2>"$b.perr" || echo "record: exit $?" >>"$b.perr"; } |
    $T run "$tq" --replay - --format csv >"$b.piped" 2>>"$b.err" || bad "$name: recorded into a pipe and replayed"
  [ -s "$b.perr" ] && bad "$name: recorded into a pipe, it says: $(head -n 2 "$b.perr")"
  cmp -s "$b.text" "$b.piped" || bad "$name: recorded into a pipe and replayed, it answers differently from the text"
  $T run "$tq" --replay - --format csv <"$b.col" >"$b.pipe" 2>>"$b.err" || bad "$name: replay from a pipe"
  cmp -s "$b.text" "$b.pipe" || bad "$name: the collection file read from a pipe answers differently from the text"
  $T run "$tq" --replay "$b.trace" --format csv --record "$b.rec.col" >"$b.recrun" 2>>"$b.err" || bad "$name: run with --record"
  $T run "$tq" --replay "$b.rec.col" --format csv >"$b.recrep" 2>>"$b.err" || bad "$name: replay of what the run collected"
  cmp -s "$b.text" "$b.recrep" || bad "$name: the replay of what the run collected answers differently from the text"
  $T run "$tq" --replay "$b.trace" --quiet --record "$b.rec.trace" 2>>"$b.err" || bad "$name: run with --record .trace"
  $T run "$tq" --replay "$b.rec.trace" --format csv >"$b.recrept" 2>>"$b.err" || bad "$name: replay of the text the run collected"
  cmp -s "$b.text" "$b.recrept" || bad "$name: the replay of the text the run collected answers differently from the text"
  awk -v a="$b.part1.trace" -v z="$b.part2.trace" '$1 ~ /^#/ { next }
    { if ($2 ~ /^(E|M)[+-]?$/ || $2 ~ /^[IJS]v/) print > a; else print > z }' "$b.trace"
  touch "$b.part1.trace" "$b.part2.trace"
  TQMON_COLFIL_GROUP=200 $T record "$tq" --replay "$b.part1.trace" -o "$b.part1.col" 2>>"$b.err" || bad "$name: record part 1"
  $T run "$tq" --replay "$b.part1.col" --replay "$b.part2.trace" --format csv >"$b.merged" 2>>"$b.err" ||
    bad "$name: two recordings merged"
  cmp -s "$b.text" "$b.merged" || bad "$name: the recording split in two and merged answers differently from the text"
  pairs=$((pairs + 1))
  rows=$((rows + $(grep -vc '^#' "$b.text")))
done
if [ -n "$py" ]; then
  # shellcheck disable=SC2046
  "$py" tests/stream_rows.py --same $(cat "$dir/streamed") >"$dir/streamed.differ" ||
    bad "the collection file's replay streamed stands for other rows than the text's: $(cat "$dir/streamed.differ")"
fi
[ "$pairs" -eq "$n" ] || bad "only $pairs of $n pairs replayed"
# (the pairs must answer something: a header line and rows for most queries)
[ "$rows" -gt $((10 * n)) ] || bad "only $rows result lines in $pairs pairs"
ways=eleven
[ -n "$py" ] || ways=ten
[ $fails = 0 ] && echo "random pairs: $pairs replayed $ways ways ($rows result lines), the same answers"
exit $((fails > 0))
