#!/bin/sh
# replay_threads.sh - a collection file decoded by a thread of its own
# (--threads 2, sensors/replay.c) answers as one decoded on the engine's
# thread (--threads 1): the same rows in the same order, and the same
# statistics (packets delivered and skipped per sensor, blocks and records
# read), all but the times, the memory and the threads.  Every golden case,
# recorded in groups of a few records (TQMON_COLFIL_GROUP=200: many
# hand-overs of a group between the threads, intervals across them), then
# a generated system of several full groups with the paper's queries and
# the bench's, and a run the engine stops early.  --stats must say that
# one thread decoded (0 with 1).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/replay_threads
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
# the statistics that must not depend on the threads
same() { sed -e '/"wall_seconds"\|"cpu_seconds"\|"peak_rss_kb"/d' -e 's/, "threads": [0-9]*//' "$1"; }
threads() { sed -n 's/.*"read": {.*"threads": \([0-9]*\).*/\1/p' "$1"; }
# one recording, one program: replayed both ways and compared
both() { # NAME COL TQ...
  b=$dir/$1 col=$2
  shift 2
  for th in 1 2; do
    # shellcheck disable=SC2086
    $T run "$@" --replay "$col" --format csv --threads $th --stats "$b.$th.json" >"$b.$th" 2>"$b.$th.err" ||
      bad "$(basename "$b"): replay with --threads $th: exit $?: $(head -3 "$b.$th.err")"
  done
  cmp -s "$b.1" "$b.2" || bad "$(basename "$b"): --threads 2 answers otherwise: $(diff "$b.1" "$b.2" | head -5 | tr '\n' ' ')"
  same "$b.1.json" >"$b.1.st"
  same "$b.2.json" >"$b.2.st"
  cmp -s "$b.1.st" "$b.2.st" || bad "$(basename "$b"): --threads 2 counts otherwise: $(diff "$b.1.st" "$b.2.st" | head -5 | tr '\n' ' ')"
  [ "$(threads "$b.1.json")" = 0 ] || bad "$(basename "$b"): --threads 1 started a decoding thread"
  [ "$(threads "$b.2.json")" = 1 ] || bad "$(basename "$b"): --threads 2 did not decode in a thread ($(threads "$b.2.json"))"
  cases=$((cases + 1))
}
cases=0
for tq in tests/golden/*.tq; do
  n=${tq%.tq}
  name=$(basename "$n")
  extra=""
  [ -f "$n.args" ] && extra=$(cat "$n.args")
  # shellcheck disable=SC2086
  TQMON_COLFIL_GROUP=200 $T record $extra "$tq" --replay "$n.trace" -o "$dir/$name.col" 2>"$dir/$name.rec.err" || {
    bad "$name: record: $(head -3 "$dir/$name.rec.err")"
    continue
  }
  # shellcheck disable=SC2086
  both "$name" "$dir/$name.col" $extra "$tq"
done
[ "$cases" -gt 100 ] || bad "only $cases golden cases replayed"

# several full groups: a generated system
./build/paper-gen -n 40 -m 12 -k 4 -s 5 -p 150000 -o "$dir/sys.trace"
$T record examples/paper/paper.tq --replay "$dir/sys.trace" -o "$dir/sys.col" 2>"$dir/sys.err" || bad "record the generated system"
for q in examples/paper/queries.tq bench/resumedbyp1.tq bench/running10.tq bench/replay.tq; do
  both "sys-$(basename "$q" .tq)" "$dir/sys.col" examples/paper/paper.tq "$q"
done
# a run the engine stops after the first record (too many ticks for
# --max-ticks): what the thread decoded ahead is not counted as skipped
for th in 1 2; do
  $T run examples/paper/paper.tq examples/paper/queries.tq --replay "$dir/sys.col" --quiet --max-ticks 50 --threads $th \
    --stats "$dir/stop.$th.json" 2>"$dir/stop.$th.err"
  [ $? -eq 1 ] || bad "a run stopped by --max-ticks (threads $th): exit status"
  grep -q "more than the 50 a replay makes" "$dir/stop.$th.err" || bad "a run stopped by --max-ticks: $(cat "$dir/stop.$th.err")"
done
same "$dir/stop.1.json" >"$dir/stop.1.st"
same "$dir/stop.2.json" >"$dir/stop.2.st"
cmp -s "$dir/stop.1.st" "$dir/stop.2.st" ||
  bad "a run stopped early: --threads 2 counts otherwise: $(diff "$dir/stop.1.st" "$dir/stop.2.st" | head -5 | tr '\n' ' ')"
[ $fails -eq 0 ]
