#!/bin/sh
# sensor_choice.sh - a relation with two sensors (docs/enabling.md, SENSOR):
# RunningOn traced on its processors and sampled on them.  A query that only
# reads RunningOn at Clock[60]'s ticks runs on the sampled sensor: --stats
# shows RunningOn_sampled used and the traced RunningOn not, and with
# --no-rule SENSOR (the previous optimizer) the other way round, with the
# same answers.  Made dearer, the sampled sensor is not chosen; nor when
# another query traces every processor (written anyway).  A recording
# whose tuples begin while their processor does not exist breaks the rule's
# condition: the run says so.  A live collection whose processor modules do
# not produce the sampled sensor (shm: generated sensors) keeps the traced
# one, and explain says why (tests/scripts/sensor_live.sh: one that does).
# Two traced sensors of one relation: the cheaper per packet where it
# answers exactly, the same answers.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/sensor_choice.$$
rm -rf "$dir" && mkdir -p "$dir"
G=tests/golden/sensor_sampled
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
field() { # stats-file sensor field
  grep "\"name\": \"$2\"" "$1" | sed -n "s/.*\"$3\": \\([a-z0-9]*\\).*/\\1/p"
}
# the queries that read RunningOn at ticks only
sed '/^retrieve into RanOnA/d' $G.tq >"$dir/ticks.tq"
$T run "$dir/ticks.tq" --replay $G.trace --format csv --stats "$dir/opt.json" >"$dir/opt.csv" 2>"$dir/opt.err" ||
  bad "optimized: exit $?"
$T run "$dir/ticks.tq" --replay $G.trace --format csv --stats "$dir/prev.json" --no-rule SENSOR >"$dir/prev.csv" 2>"$dir/prev.err" ||
  bad "--no-rule SENSOR: exit $?"
[ "$(field "$dir/opt.json" RunningOn_sampled used)" = true ] || bad "optimized: the sampled sensor is not used"
[ "$(field "$dir/opt.json" RunningOn used)" = false ] || bad "optimized: the traced sensor is used"
[ "$(field "$dir/opt.json" RunningOn delivered)" = 0 ] || bad "optimized: the traced sensor delivered packets"
[ "$(field "$dir/opt.json" RunningOn_sampled samples)" -gt 0 ] || bad "optimized: no samples"
[ "$(field "$dir/opt.json" RunningOn_sampled outside)" = 0 ] || bad "optimized: tuples outside their processor's lifetime"
[ "$(field "$dir/prev.json" RunningOn used)" = true ] || bad "--no-rule SENSOR: the traced sensor is not used"
[ "$(field "$dir/prev.json" RunningOn_sampled used)" = false ] || bad "--no-rule SENSOR: the sampled sensor is used"
[ "$(field "$dir/prev.json" RunningOn delivered)" -gt 0 ] || bad "--no-rule SENSOR: the traced sensor delivered nothing"
[ -s "$dir/opt.csv" ] && diff "$dir/opt.csv" "$dir/prev.csv" >/dev/null || bad "the answers differ with and without SENSOR"
grep -q . "$dir/opt.err" && bad "optimized: unexpected messages: $(cat "$dir/opt.err")"
# the sampled sensor made dearer than the traced one: not chosen
sed 's/cost 300ns/cost 1ms/' "$dir/ticks.tq" >"$dir/dear.tq"
$T run "$dir/dear.tq" --replay $G.trace --format csv --stats "$dir/dear.json" >"$dir/dear.csv" 2>/dev/null || bad "dear: exit $?"
[ "$(field "$dir/dear.json" RunningOn_sampled used)" = false ] || bad "dear: the sampled sensor is used"
diff "$dir/opt.csv" "$dir/dear.csv" >/dev/null || bad "dear: the answers differ"
# a query that traces every processor: the traced sensor is written anyway,
# so the others read it too (the cheapest combination)
{ cat "$dir/ticks.tq"; echo 'retrieve into All (RO.Process, RO.Processor)'; } >"$dir/all.tq"
$T run "$dir/all.tq" --replay $G.trace --format csv --stats "$dir/all.json" >"$dir/all.csv" 2>/dev/null || bad "all: exit $?"
[ "$(field "$dir/all.json" RunningOn_sampled used)" = false ] || bad "all: the sampled sensor is used"
[ "$(field "$dir/all.json" RunningOn used)" = true ] || bad "all: the traced sensor is not used"
sed '/^# All/,$d' "$dir/all.csv" | diff "$dir/opt.csv" - >/dev/null || bad "all: the other queries' answers differ"
# a tuple that begins before its processor exists: said, counted
awk '$2 == "Processor+" && $3 == "B" { $1 = "2:05:13" } { print }' $G.trace | sort -s -k1,1 >"$dir/late.trace"
$T run "$dir/ticks.tq" --replay "$dir/late.trace" --format csv --stats "$dir/late.json" >/dev/null 2>"$dir/late.err" ||
  bad "late processor: exit $?"
[ "$(field "$dir/late.json" RunningOn_sampled outside)" = 1 ] ||
  bad "late processor: outside $(field "$dir/late.json" RunningOn_sampled outside), expected 1"
grep -q "warning: 1 tuples of RunningOn began while the flag entity of RunningOn_sampled did not exist" "$dir/late.err" ||
  bad "late processor: no warning ($(cat "$dir/late.err"))"
# a live collection that cannot ask the sampled sensor: SENSOR keeps the
# traced one (it used to refuse the run, telling to turn the rule off)
$T explain "$dir/ticks.tq" --pm shm=exec:/bin/true >"$dir/live.out" 2>"$dir/live.err" || bad "live: explain exit $?: $(cat "$dir/live.err")"
grep -q "alpha^{S" "$dir/live.out" && bad "live: the sampled sensor is chosen: $(cat "$dir/live.out")"
[ "$(grep -c "SENSOR: traced sensor RunningOn: its sampled sensor RunningOn_sampled (.*) cannot be asked: no processor module of this live collection produces it" \
  "$dir/live.out")" = 2 ] || bad "live: explain does not say why: $(cat "$dir/live.out")"
$T run "$dir/ticks.tq" --pm shm=exec:/bin/true --snapshots 1 >/dev/null 2>"$dir/live.err"
grep -q "SENSOR\|RunningOn_sampled" "$dir/live.err" && bad "live: $(cat "$dir/live.err")"
# two traced sensors (tests/golden/sensor_traced): the cheaper per packet,
# RunningOn_traced on the processes, answers All and OfP1; OnA, narrowed on
# the processor, keeps RunningOn; the answers are those of --no-rule SENSOR
# (RunningOn only), and made dearer, RunningOn_traced is not used
GT=tests/golden/sensor_traced
$T run $GT.tq --replay $GT.trace --format csv --stats "$dir/tr.json" >"$dir/tr.csv" 2>"$dir/tr.err" || bad "traced: exit $?"
$T run $GT.tq --replay $GT.trace --format csv --stats "$dir/trprev.json" --no-rule SENSOR >"$dir/trprev.csv" 2>&1 ||
  bad "traced --no-rule SENSOR: exit $?"
grep -q . "$dir/tr.err" && bad "traced: unexpected messages: $(cat "$dir/tr.err")"
[ -s "$dir/tr.csv" ] && diff "$dir/tr.csv" "$dir/trprev.csv" >/dev/null || bad "traced: the answers differ with and without SENSOR"
[ "$(field "$dir/tr.json" RunningOn_traced used)" = true ] || bad "traced: RunningOn_traced is not used"
[ "$(field "$dir/tr.json" RunningOn_traced delivered)" -gt 0 ] || bad "traced: RunningOn_traced delivered nothing"
[ "$(field "$dir/tr.json" RunningOn used)" = true ] || bad "traced: RunningOn (OnA) is not used"
[ "$(field "$dir/trprev.json" RunningOn_traced used)" = false ] || bad "traced --no-rule SENSOR: RunningOn_traced is used"
sed 's/traced on target cost 500ns/traced on target cost 5us/' $GT.tq >"$dir/trdear.tq"
$T run "$dir/trdear.tq" --replay $GT.trace --format csv --stats "$dir/trdear.json" >"$dir/trdear.csv" 2>&1 || bad "traced dear: exit $?"
[ "$(field "$dir/trdear.json" RunningOn_traced used)" = false ] || bad "traced dear: RunningOn_traced is used"
diff "$dir/tr.csv" "$dir/trdear.csv" >/dev/null || bad "traced dear: the answers differ"
# a loss of RunningOn in the recording: every answer that reads one of its
# sensors says it may be incomplete (those on the other sensor were silent)
awk '{ print } $1 == "2:15:37" && !d { print "2:15:37 RunningOn! 2 2:10:00 2:15:37 B"; d = 1 }' $G.trace >"$dir/lost.trace"
for q in $G $GT; do
  $T run $q.tq --replay "$dir/lost.trace" --format csv >/dev/null 2>"$dir/lost.err" || bad "lost $q: exit $?"
  for r in $(sed -n 's/^retrieve into \([A-Za-z0-9]*\).*/\1/p' $q.tq); do
    grep -q "warning: $r may be incomplete from 2:10:00 to 2:15:37: 2 packets of RunningOn lost" "$dir/lost.err" ||
      bad "lost $q: $r says nothing of the loss: $(cat "$dir/lost.err")"
  done
done
# a recording that holds records of RunningOn_traced (a text recording
# written so, or one made live where a PM produced it): with no record of
# RunningOn, they answer RunningOn_traced (the same rows); with RunningOn's
# records too, a replay would answer it from both, each tuple twice (a
# count of sends counted 2 for each): it refuses, exit 1
sed 's/ RunningOn\([+-]\)/ RunningOn_traced\1/' $GT.trace >"$dir/own.trace"
$T run $GT.tq --replay "$dir/own.trace" --format csv >"$dir/own.csv" 2>"$dir/own.err" || bad "own records: exit $?: $(cat "$dir/own.err")"
sect() { awk -v s="# $2" '/^# / { on = $0 == s } on' "$1"; }
[ -n "$(sect "$dir/tr.csv" All)" ] && [ "$(sect "$dir/own.csv" All)" = "$(sect "$dir/tr.csv" All)" ] &&
  [ "$(sect "$dir/own.csv" OfP1)" = "$(sect "$dir/tr.csv" OfP1)" ] || bad "own records: All or OfP1 differs: $(cat "$dir/own.csv")"
# recorded again by a replay, they are kept (they were dropped: All empty)
$T run $GT.tq --replay "$dir/own.trace" --format csv --record "$dir/own2.trace" >/dev/null 2>&1 || bad "own records, recorded: exit $?"
$T run $GT.tq --replay "$dir/own2.trace" --format csv >"$dir/own2.csv" 2>&1 || bad "own records, recorded: replay: exit $?"
[ "$(sect "$dir/own2.csv" All)" = "$(sect "$dir/tr.csv" All)" ] || bad "own records, recorded again: All differs: $(cat "$dir/own2.csv")"
awk '{ print } $2 == "SendMessage" { $2 = "SendMessage_traced"; print }' $GT.trace >"$dir/both.trace"
grep -c SendMessage_traced "$dir/both.trace" >/dev/null || bad "both: no SendMessage_traced record written"
sed -e 's/^event    SendMessage (\(.*\)) traced on initiator;/event SendMessage (\1) traced on initiator cost 2us rate 5 traced on target cost 500ns rate 5;/' \
  -e '/^retrieve/d' -e '/^range/d' $GT.tq >"$dir/both.tq"
printf 'range of S is SendMessage\nretrieve into Sends (S.Process, N = count(S.Mailbox))\n' >>"$dir/both.tq"
grep -q "SendMessage.*traced on target cost 500ns" "$dir/both.tq" || bad "both: the program was not rewritten"
$T run "$dir/both.tq" --replay "$dir/both.trace" --format csv >"$dir/both.csv" 2>"$dir/both.err"
rc=$?
[ $rc -eq 1 ] || bad "both: exit $rc (expected 1): $(cat "$dir/both.csv")"
grep -q "error: the recording holds records of both SendMessage and SendMessage_traced" "$dir/both.err" ||
  bad "both: not said: $(cat "$dir/both.err")"
grep -q ',2,' "$dir/both.csv" && bad "both: a send counted twice: $(cat "$dir/both.csv")"
$T run "$dir/both.tq" --replay $GT.trace --format csv >"$dir/one.csv" 2>"$dir/one.err" || bad "both, R's records only: exit $?"
grep -q '^P1,1,' "$dir/one.csv" || bad "both, R's records only: no count of 1: $(cat "$dir/one.csv")"
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
