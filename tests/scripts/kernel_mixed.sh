#!/bin/sh
# kernel_mixed.sh - the kernel (--kernel), this host's /proc (--host) and a
# program's generated sensors (--attach) in one run and one query
# (tests/kernel/mixed.tq), their times all CLOCK_REALTIME nanoseconds: the
# program (tests/kernel/jobs.c) sleeps 200 ms, 1500 ms and 200 ms while it
# works on a job.  Its three sleeps, traced in the kernel, lie within the
# Working interval its own sensor reported, in that order, and join with
# it; the memory sampled from /proc at the ticks within it joins too.
# sensors/host.tq and sensors/kernel.tq are given together (both declare
# Processor; --kernel's produces it).
set -u
KORACLE=
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_mixed
rm -rf "$d" && mkdir -p "$d"
rm -f "$d/ids" "$d/go"
build/kernel/jobs -o "$d/ids" -g "$d/go" >"$d/jobs.out" 2>&1 &
kpid=$!
waitfor "$d/ids" . 60 || { bad "the program did not start"; exit 1; }
eval "$(cat "$d/ids")"
sed "s/PID/$jobs/g" tests/kernel/mixed.tq >"$d/q.tq"
$T run sensors/kernel.tq sensors/host.tq tests/kernel/jobs.tq "$d/q.tq" --kernel --host --attach $jobs \
  --format csv --trace-level 2 --stats "$d/stats.json" >"$d/out.csv" 2>"$d/err" &
tqpid=$!
waitfor "$d/err" "tracing since|error|fatal" 120 || bad "tqmon did not start tracing"
touch "$d/go"
wait $kpid || bad "the program failed"
wait $tqpid || bad "tqmon: exit $?"
grep -v "info:" "$d/err"
grep -qE "error|Sanitizer|runtime error" "$d/err" && bad "tqmon: $(cat "$d/err")"
grep -q "kernel_processor" "$d/stats.json" && grep -q '"host_processor".*left out: kernel_processor produces Processor' "$d/stats.json" ||
  bad "Processor not produced by the kernel's module, the host's left out"

work=$(section "$d/out.csv" Works)
echo "Working: $work"
wfrom=$(echo "$work" | cut -d, -f2) wto=$(echo "$work" | cut -d, -f3)
[ -n "$wfrom" ] && [ -n "$wto" ] || bad "no closed Working interval"
section "$d/out.csv" Sleeps | sort -t, -k2 -n >"$d/sleeps"
cat "$d/sleeps"
[ "$(wc -l <"$d/sleeps")" -eq 3 ] || bad "not three clock_nanosleep"
i=0
for ms in 200 1500 200; do
  i=$((i + 1))
  line=$(sed -n "${i}p" "$d/sleeps")
  from=$(echo "$line" | cut -d, -f2) to=$(echo "$line" | cut -d, -f3)
  [ -n "$from" ] && [ -n "$to" ] || { bad "sleep $i: no interval"; continue; }
  dur=$(((to - from) / 1000000))
  [ $dur -ge $ms ] || bad "sleep $i took $dur ms, not $ms"
  [ "$from" -ge "$wfrom" ] && [ "$to" -le "$wto" ] || bad "sleep $i [$from, $to) is not within Working [$wfrom, $wto)"
done
n=$(section "$d/out.csv" CallsWhileWorking | grep -c '^clock_nanosleep,J1,')
[ "$n" -eq 3 ] || bad "the three sleeps do not all join with Working ($n)"
m=$(section "$d/out.csv" MemoryWhileWorking | awk -F, '$2 == "J1" && $1 > 0' | wc -l)
echo "memory samples while working: $m"
[ "$m" -ge 1 ] || bad "no memory sample of the program while it worked (1.9 s, ticks of 1 s)"
section "$d/out.csv" MemoryWhileWorking | while IFS=, read -r rss job at; do
  [ "$at" -ge "$wfrom" ] && [ "$at" -lt "$wto" ] || echo "FAIL: a memory sample at $at, outside Working"
done | tee "$d/mem" | grep -q FAIL && bad "$(cat "$d/mem")"
[ $fails -eq 0 ] && echo ok
exit $fails
