#!/bin/sh
# host_nothing.sh - a host query that enables nothing reads no process's
# files.  tests/host/nothing.tq asks about processes that do not exist: no
# answers, no reads by any sampled PM;
# the discovery of processes lists /proc once per tick and reads each new
# pid's stat once.  A query about processors only (tests/host/cpus.tq) does
# not even list /proc: the CPUs are those of /proc/stat, read once.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_nothing
rm -rf "$dir" && mkdir -p "$dir"

$T run --host sensors/host.tq tests/host/nothing.tq --snapshots 3 --format csv --stats "$dir/stats.json" \
  >"$dir/out.csv" 2>"$dir/err" || bad "run: exit $? $(cat "$dir/err")"
cat "$dir/out.csv"
rows=$(grep -vc '^#\|valid_' "$dir/out.csv")
[ "$rows" -eq 0 ] || bad "$rows answers about processes that do not exist"
for pm in host_processstate host_lastprocessor host_cputime host_memory host_io; do
  m=$(pmmsg "$dir/stats.json" $pm)
  echo "$pm: $m"
  [ "$m" = "reads=0 failed=0 pids=0 []" ] || bad "$pm read files: $m"
done
m=$(pmmsg "$dir/stats.json" host_process)
echo "host_process: $m"
[ "$(field "$m" listings)" -eq 3 ] || bad "host_process: not one listing of /proc per tick"
[ "$(field "$m" reads)" -eq $(($(field "$m" begun) + $(field "$m" failed))) ] ||
  bad "host_process: reads are not one per new pid"
m=$(pmmsg "$dir/stats.json" host_processor)
echo "host_processor: $m"
[ "$m" = "reads=0 cpus=0" ] || bad "host_processor read /proc/stat, which no query needs: $m"

# processors only
$T run --host sensors/host.tq tests/host/cpus.tq --snapshots 2 --format csv --stats "$dir/cpus.json" \
  >"$dir/cpus.csv" 2>>"$dir/err" || bad "run cpus: exit $?"
cat "$dir/cpus.csv"
[ "$(section "$dir/cpus.csv" Cpus | cut -d, -f1 | tr '\n' ' ')" = "$(grep -o '^cpu[0-9][0-9]*' /proc/stat | sort | tr '\n' ' ')" ] ||
  bad "the processors are not the cpuN of /proc/stat"
m=$(pmmsg "$dir/cpus.json" host_process)
echo "host_process: $m"
[ "$m" = "listings=0 reads=0 failed=0 begun=0 ended=0 alive=0" ] || bad "host_process worked for a query about processors: $m"
m=$(pmmsg "$dir/cpus.json" host_processor)
echo "host_processor: $m"
[ "$m" = "reads=1 cpus=$(ncpus)" ] || bad "host_processor: $m"

grep -q "Sanitizer\|runtime error" "$dir/err" && bad "sanitizer: $(cat "$dir/err")"
[ $fails -eq 0 ] || exit 1
echo ok
