#!/bin/sh
# host_record.sh - tqmon record --host: every host sensor on every process
# (sampled ones at every tick) into a collection file; a query about one
# process answered later over that recording finds it with its command.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_record
rm -rf "$dir" && mkdir -p "$dir"
sleep 30 &
pid=$!
waitcomm $pid sleep || bad "the sleep did not start"
printf 'clock 200ms;\n' >"$dir/clock.tq"
$T record "$dir/clock.tq" sensors/host.tq -o "$dir/host.col" --host --snapshots 3 2>"$dir/rec.err" ||
  bad "record --host: $(cat "$dir/rec.err")"
$T convert "$dir/clock.tq" sensors/host.tq "$dir/host.col" "$dir/host.trace" 2>>"$dir/rec.err" || bad "convert"
for r in 'Process+' 'ProcessState@' 'Memory@' 'CpuTime@' 'LastProcessor@'; do
  grep -q " $r" "$dir/host.trace" || bad "record --host: no $r records"
done
sed "s/PID/$pid/g" tests/host/one.tq | sed '/^clock/d' >"$dir/one.tq"
$T run "$dir/clock.tq" sensors/host.tq "$dir/one.tq" --replay "$dir/host.col" --format csv >"$dir/out.csv" 2>"$dir/run.err" ||
  bad "query over the recording: $(cat "$dir/run.err")"
kill $pid 2>/dev/null
grep -q "^$pid,$pid,sleep," "$dir/out.csv" || bad "the sleep is not in the recording: $(head -20 "$dir/out.csv")"
grep -q "^$pid,.*,sleep," "$dir/out.csv" || bad "no state of the sleep"
[ $fails -eq 0 ]
