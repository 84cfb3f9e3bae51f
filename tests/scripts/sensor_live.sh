#!/bin/sh
# sensor_live.sh - rule SENSOR in live collections (docs/enabling.md): the
# relation Runs (tests/testpm/runs.tq) has a traced sensor, produced by the
# test PM runs, and a sampled one, Runs_sampled, produced by runssampled
# (tests/testpm/sources.c); the timer ticks gives 12 snapshots, one a
# second, and hosts the hosts A and B.  The optimizer picks among the
# sensors the run's processor modules produce:
#   - both loaded: the sampled sensor (the cheaper): runs writes no record,
#     runssampled answers one sample a host at each of Clock[2]'s 6 ticks;
#   - --no-rule SENSOR: the traced one (runs writes 18 records);
#   - runs only: the traced one, and explain says the sampled cannot be
#     asked (it used to refuse the run, telling to turn the rule off);
#   - runssampled only, the sampled sensor made dearer: still the sampled
#     one, the only one the run can ask; a query that needs Runs's
#     intervals then says no processor module produces Runs.
# Every answer equals the schedule the PMs share, computed here from its
# definition (job (s + h) / 3 on host h during second s): an observation
# independent of either sensor.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/sensor_live.$$
rm -rf "$dir" && mkdir -p "$dir"
D=tests/testpm
[ -e build/testpm/runssampled.so ] || { echo "skipped: build/testpm/runssampled.so not built"; exit 77; }
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
field() { # stats-file sensor field
  grep "\"name\": \"$2\"" "$1" | sed -n "s/.*\"$3\": \\([a-z0-9]*\\).*/\\1/p"
}
AT=at=1+2+3+4+5+6+7+8+9+10+11+12
# run NAME TQ PMS... [OPTIONS]: 12 snapshots, CSV, stats and the PMs' log
run() {
  name=$1 tq=$2
  shift 2
  $T run "$tq" --pm-path build/testpm --format csv --pm ticks=$AT --pm hosts= "$@" --stats "$dir/$name.json" \
    >"$dir/$name.csv" 2>"$dir/$name.err" || bad "$name: exit $?: $(cat "$dir/$name.err")"
  grep -q . "$dir/$name.err" && bad "$name: unexpected messages: $(cat "$dir/$name.err")"
}
# the expected answer: at each tick c of Clock[2] (2 .. 12 s; hosts from 1 s)
{
  echo "# Every2"
  echo "Job,Host,valid_at"
  for c in 2 4 6 8 10 12; do
    echo "j$((c / 3)),A,${c}000000000"
    echo "j$(((c + 1) / 3)),B,${c}000000000"
  done
} >"$dir/expected.csv"

run both $D/runs.tq --pm runs=log=$dir/both.log --pm runssampled=log=$dir/both.log
run prev $D/runs.tq --pm runs=log=$dir/prev.log --pm runssampled=log=$dir/prev.log --no-rule SENSOR
run traced $D/runs.tq --pm runs=log=$dir/traced.log
diff "$dir/expected.csv" "$dir/both.csv" >/dev/null || bad "both: the answer is not the schedule: $(diff "$dir/expected.csv" "$dir/both.csv")"
# a recording of that run holds Runs_sampled's samples, not Runs's records:
# a replay, which answers Runs_sampled from Runs's records, has none of
# them, and says so (it answered nothing without a word before)
$T run $D/runs.tq --pm-path build/testpm --format csv --pm ticks=$AT --pm hosts= --pm runs= --pm runssampled= \
  --record "$dir/both.trace" >/dev/null 2>"$dir/rec.err" || bad "record both: exit $?: $(cat "$dir/rec.err")"
grep -q "Runs_sampled@" "$dir/both.trace" || bad "record both: no sample of Runs_sampled recorded"
$T run $D/runs.tq --replay "$dir/both.trace" --format csv >"$dir/rep.csv" 2>"$dir/rep.err" || bad "replay of both: exit $?"
grep -q "warning: the recording holds 12 samples of Runs_sampled and no record of Runs" "$dir/rep.err" ||
  bad "replay of both: not said: $(cat "$dir/rep.err")"
# a recording made by a replay holds Runs's records and the samples: no word
$T run tests/golden/sensor_sampled.tq --replay tests/golden/sensor_sampled.trace --format csv --record "$dir/ss.trace" >/dev/null 2>&1 ||
  bad "record of a replay: exit $?"
grep -q "RunningOn_sampled@" "$dir/ss.trace" || bad "record of a replay: no sample of RunningOn_sampled recorded"
$T run tests/golden/sensor_sampled.tq --replay "$dir/ss.trace" --format csv >"$dir/ss.csv" 2>"$dir/ss.err" || bad "replay of a replay's recording: exit $?"
cmp -s "$dir/ss.csv" tests/golden/sensor_sampled.csv || bad "replay of a replay's recording: other answers"
grep -q "samples of" "$dir/ss.err" && bad "replay of a replay's recording: $(cat "$dir/ss.err")"
diff "$dir/expected.csv" "$dir/prev.csv" >/dev/null || bad "--no-rule SENSOR: the answer is not the schedule"
diff "$dir/expected.csv" "$dir/traced.csv" >/dev/null || bad "traced: the answer is not the schedule"
[ "$(field "$dir/both.json" Runs_sampled used)" = true ] || bad "both: the sampled sensor is not used"
[ "$(field "$dir/both.json" Runs used)" = false ] || bad "both: the traced sensor is used"
grep -qx "runs records 0" "$dir/both.log" || bad "both: runs wrote records: $(cat "$dir/both.log")"
grep -qx "runssampled samples 12" "$dir/both.log" || bad "both: not 12 samples: $(cat "$dir/both.log")"
[ "$(field "$dir/prev.json" Runs used)" = true ] || bad "--no-rule SENSOR: the traced sensor is not used"
[ "$(field "$dir/prev.json" Runs_sampled used)" = false ] || bad "--no-rule SENSOR: the sampled sensor is used"
grep -qx "runs records 18" "$dir/prev.log" || bad "--no-rule SENSOR: not 18 records: $(cat "$dir/prev.log")"
grep -qx "runssampled samples 0" "$dir/prev.log" || bad "--no-rule SENSOR: samples taken: $(cat "$dir/prev.log")"
[ "$(field "$dir/traced.json" Runs used)" = true ] || bad "traced: the traced sensor is not used"
grep -qx "runs records 18" "$dir/traced.log" || bad "traced: not 18 records: $(cat "$dir/traced.log")"
$T explain $D/runs.tq --pm-path build/testpm --pm ticks=at=1 --pm hosts= --pm runs= >"$dir/traced.explain" 2>&1 ||
  bad "traced: explain exit $?"
grep -q "SENSOR: traced sensor Runs: its sampled sensor Runs_sampled (.*) cannot be asked" "$dir/traced.explain" ||
  bad "traced: explain does not say why: $(cat "$dir/traced.explain")"

# only the sampled sensor's producer, which is made the dearer
sed 's/cost 300ns/cost 1ms/' $D/runs.tq >"$dir/dear.tq"
run only "$dir/dear.tq" --pm runssampled=log=$dir/only.log
diff "$dir/expected.csv" "$dir/only.csv" >/dev/null || bad "only: the answer is not the schedule"
[ "$(field "$dir/only.json" Runs_sampled used)" = true ] || bad "only: the sampled sensor is not used"
grep -qx "runssampled samples 12" "$dir/only.log" || bad "only: not 12 samples: $(cat "$dir/only.log")"
{ cat "$dir/dear.tq"; echo 'retrieve into Starts (R.Job) valid at begin of R'; } >"$dir/starts.tq"
if $T run "$dir/starts.tq" --pm-path build/testpm --pm ticks=$AT --pm hosts= --pm runssampled= >/dev/null 2>"$dir/starts.err"; then
  bad "starts: ran without a producer of Runs"
fi
grep -q "no processor module produces relation Runs, which a query needs" "$dir/starts.err" ||
  bad "starts: $(cat "$dir/starts.err")"
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
