#!/bin/sh
# host_ends.sh - a process that ends during the run ends its Process
# interval, and its sensors answer no more: a `sleep 2` is watched for 40
# ticks of 100 ms (tests/host/ends.tq).  Its Process interval must be closed,
# every Memory sample must lie inside it, and the sampled PM must have read
# its files only while it was there (the one read that finds it gone, if
# any, is counted as failed).  Should the machine be so slow that the sleep
# ended before the first snapshot, or after the last, the test says so and
# checks only what it can.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_ends
rm -rf "$dir" && mkdir -p "$dir"

# a child of this shell, which reaps it as soon as it ends (until then it
# is a zombie, still a process in /proc: its interval would go on)
sleep 2 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
waitcomm $pid sleep || { echo "FAIL: sleep $pid did not start"; exit 1; }
sed "s/PID/$pid/g" tests/host/ends.tq >"$dir/q.tq"
$T run --host sensors/host.tq "$dir/q.tq" --snapshots 40 --format csv --stats "$dir/stats.json" \
  >"$dir/out.csv" 2>"$dir/err" || bad "run: exit $? $(cat "$dir/err")"
cat "$dir/out.csv"
pr=$(section "$dir/out.csv" Pr)
m=$(pmmsg "$dir/stats.json" host_memory)
echo "host_memory: $m"
if [ -z "$pr" ]; then
  echo "the sleep ended before the first snapshot: nothing to check"
elif [ -z "$(echo "$pr" | cut -d, -f4)" ]; then
  echo "the sleep outlived the run: its interval stays open"
else
  IFS=, read -r p c from to <<END
$pr
END
  [ "$p,$c" = "$pid,sleep" ] || bad "Process: $pr"
  n=$(section "$dir/out.csv" Mem | wc -l)
  [ "$n" -ge 1 ] || bad "no Memory sample while it was there"
  section "$dir/out.csv" Mem | while IFS=, read -r p rss at; do
    { [ "$at" -ge "$from" ] && [ "$at" -lt "$to" ]; } || echo "FAIL: Memory at $at, outside [$from, $to)"
  done >"$dir/fails"
  [ -s "$dir/fails" ] && bad "$(cat "$dir/fails")"
  [ "$(field "$m" reads)" -eq "$n" ] || [ "$(field "$m" reads)" -eq $((n + 1)) ] ||
    bad "host_memory read $(field "$m" reads) times for $n samples"
  [ "$(field "$m" reads)" -eq $((n + $(field "$m" failed))) ] || bad "host_memory: a read of a gone process was not counted failed"
fi

grep -q "Sanitizer\|runtime error" "$dir/err" && bad "sanitizer: $(cat "$dir/err")"
[ $fails -eq 0 ] || exit 1
echo ok
