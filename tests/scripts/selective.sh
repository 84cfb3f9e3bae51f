#!/bin/sh
# selective.sh - a replay of a collection file reads only the blocks its
# queries need (format 3: per-relation streams, entity summaries), and
# answers exactly as a replay of every block (colfil=full:FILE).  For every
# golden case: record everything (tqmon record), replay it selectively and
# fully; the results are the golden ones both times, and each sensor
# delivers the same packets.  Once more with groups of a few records
# (TQMON_COLFIL_GROUP), so that intervals span groups whose blocks are
# skipped.  Then a generated system of several groups
# (intervals that span groups, entities some queries leave out) with the
# paper's queries and the benchmark's, the same way; --stats shows what was
# skipped, and the selective replays must have skipped something.  A text
# recording's replay, too, passes over the records no query needs (it
# parses and checks them all): it answers as its full replay
# (trace=full:FILE), its sensors deliver the same packets, and it says
# what it skipped.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/selective
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
# delivered FILE: "sensor delivered" lines of a --stats file
delivered() { sed -n 's/.*{"name": "\([^"]*\)".*"delivered": \([0-9]*\).*/\1 \2/p' "$1"; }
rd() { sed -n "s/.*\"read\": {.*\"$2\": \\([0-9]*\\).*/\\1/p" "$1"; }
cases=0 skipped=0
for group in "" 200; do # (TQMON_COLFIL_GROUP=200: groups of a few records)
for tq in tests/golden/*.tq; do
  n=${tq%.tq}
  name=$(basename "$n")
  extra=""
  [ -f "$n.args" ] && extra=$(cat "$n.args")
  d=$dir/$name$group
  # shellcheck disable=SC2086
  TQMON_COLFIL_GROUP=$group $T record $extra "$tq" --replay "$n.trace" -o "$d.col" 2>"$d.err" || {
    bad "$name: record"
    continue
  }
  # shellcheck disable=SC2086
  $T run $extra "$tq" --replay "$d.col" --format csv --stats "$d.sel.json" >"$d.sel" 2>>"$d.err" || bad "$name: selective replay"
  # shellcheck disable=SC2086
  $T run $extra "$tq" --pm "colfil=full:$d.col" --format csv --stats "$d.full.json" >"$d.full" 2>>"$d.err" ||
    bad "$name: full replay"
  cmp -s "$d.sel" "$d.full" || bad "$name: the selective replay answers differently from the full one"
  cmp -s "$d.sel" "$n.csv" || bad "$name: the selective replay differs from the golden results"
  delivered "$d.sel.json" >"$d.sel.del"
  delivered "$d.full.json" >"$d.full.del"
  cmp -s "$d.sel.del" "$d.full.del" || bad "$name: the sensors delivered other packets: $(diff "$d.full.del" "$d.sel.del" | tr '\n' ' ')"
  cases=$((cases + 1))
  [ "$(rd "$d.sel.json" records_read)" -lt "$(rd "$d.sel.json" records)" ] 2>/dev/null && skipped=$((skipped + 1))
done
done
[ "$cases" -gt 200 ] || bad "only $cases golden cases replayed"
[ "$skipped" -gt 10 ] || bad "only $skipped golden cases skipped some records"

# several groups: a generated system, the paper's queries and the bench's
./build/paper-gen -n 40 -m 12 -k 4 -s 5 -p 150000 -o "$dir/sys.trace"
$T record examples/paper/paper.tq --replay "$dir/sys.trace" -o "$dir/sys.col" 2>"$dir/sys.err" || bad "record the generated system"
for q in examples/paper/queries.tq bench/resumedbyp1.tq bench/running10.tq bench/replay.tq; do
  b=$dir/$(basename "$q" .tq)
  $T run examples/paper/paper.tq "$q" --replay "$dir/sys.col" --format csv --stats "$b.sel.json" >"$b.sel" 2>>"$dir/sys.err" ||
    bad "$q: selective replay"
  $T run examples/paper/paper.tq "$q" --pm "colfil=full:$dir/sys.col" --format csv --stats "$b.full.json" >"$b.full" 2>>"$dir/sys.err" ||
    bad "$q: full replay"
  $T run examples/paper/paper.tq "$q" --replay "$dir/sys.trace" --format csv --stats "$b.text.json" >"$b.text" 2>>"$dir/sys.err" ||
    bad "$q: text replay"
  $T run examples/paper/paper.tq "$q" --pm "trace=full:$dir/sys.trace" --format csv --stats "$b.tfull.json" >"$b.tfull" \
    2>>"$dir/sys.err" || bad "$q: full text replay"
  cmp -s "$b.sel" "$b.full" || bad "$q: the selective replay answers differently from the full one"
  cmp -s "$b.sel" "$b.text" || bad "$q: the selective replay answers differently from the text one"
  cmp -s "$b.text" "$b.tfull" || bad "$q: the text replay answers differently from the full text one"
  ts=$(sed -n 's/.*"skipped": \([0-9]*\).*/\1/p' "$b.text.json" | awk '{s += $1} END {print s + 0}')
  tf=$(sed -n 's/.*"skipped": \([0-9]*\).*/\1/p' "$b.tfull.json" | awk '{s += $1} END {print s + 0}')
  [ "$ts" -gt 0 ] && [ "$tf" = 0 ] || bad "$q: the text replay skipped $ts records, the full one $tf"
  delivered "$b.sel.json" >"$b.sel.del"
  delivered "$b.full.json" >"$b.full.del"
  cmp -s "$b.sel.del" "$b.full.del" || bad "$q: the sensors delivered other packets"
  delivered "$b.text.json" >"$b.text.del"
  cmp -s "$b.text.del" "$b.full.del" || bad "$q: the text replay's sensors delivered other packets"
  br=$(rd "$b.sel.json" blocks_read) bl=$(rd "$b.sel.json" blocks)
  [ "$(rd "$b.full.json" blocks_read)" = "$bl" ] || bad "$q: the full replay did not read every block"
  [ "$br" -lt "$bl" ] 2>/dev/null || bad "$q: the selective replay read $br of $bl blocks"
  [ "$(grep -c . "$b.sel")" -gt 1 ] || bad "$q: no results"
done
[ $fails = 0 ] && echo "selective replays: $cases golden cases ($skipped skipped records) and 4 queries over several groups, as full replays"
exit $((fails > 0))
