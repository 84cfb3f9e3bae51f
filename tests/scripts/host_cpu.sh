#!/bin/sh
# host_cpu.sh - the CPU time of a busy process against ps.  A shell loop
# started here is sampled for 5 ticks (tests/host/busy.tq).  CpuTime must lie
# between what ps says before and after the run (`ps -o times`, whole
# seconds: this catches a wrong unit), never decrease, and be user + system;
# CpuUse must be exactly the differences of consecutive CpuTime samples.
# The loop is always runnable (Running), under its own name (sh), and runs
# on processors of this host.  No assertion depends on how fast the machine
# is: the bounds hold however little CPU the loop got.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_cpu
rm -rf "$dir" && mkdir -p "$dir"

sh -c 'while :; do :; done' &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
# let it use a second of CPU first, so the lower bound means something
# (on a very busy machine it may get less: the bounds still hold)
n=0
while [ "$(ps -o times= -p $pid | tr -d ' ')" -lt 1 ] && [ $n -lt 100 ]; do
  sleep 0.1
  n=$((n + 1))
done
t1=$(ps -o times= -p $pid | tr -d ' ')
sed "s/PID/$pid/g" tests/host/busy.tq >"$dir/q.tq"
$T run --host sensors/host.tq "$dir/q.tq" --snapshots 5 --format csv --stats "$dir/stats.json" \
  >"$dir/out.csv" 2>"$dir/err" || bad "run: exit $? $(cat "$dir/err")"
t2=$(ps -o times= -p $pid | tr -d ' ')
comm=$(ps -o comm= -p $pid)
echo "ps: $comm, $t1 s of CPU before, $t2 s after"
cat "$dir/out.csv"

[ "$(section "$dir/out.csv" Cpu | wc -l)" -eq 5 ] || bad "CpuTime: not 5 samples"
[ "$(section "$dir/out.csv" Use | wc -l)" -eq 4 ] || bad "CpuUse: not 4 deltas"
prev=-1
section "$dir/out.csv" Cpu | while IFS=, read -r p ns u s at; do
  [ "$ns" -eq $((u + s)) ] || echo "FAIL: CpuTime at $at: $ns is not $u + $s"
  [ "$ns" -ge $((t1 * 1000000000)) ] || echo "FAIL: CpuTime at $at: $ns ns, but ps said $t1 s before the run"
  [ "$ns" -lt $(((t2 + 1) * 1000000000)) ] || echo "FAIL: CpuTime at $at: $ns ns, but ps said $t2 s after the run"
  [ "$ns" -ge "$prev" ] || echo "FAIL: CpuTime at $at: $ns, less than before ($prev)"
  prev=$ns
done >>"$dir/fails"
# CpuUse at each tick = CpuTime now - CpuTime at the previous tick
section "$dir/out.csv" Cpu | awk -F, 'NR > 1 { print $1 "," $2 - prev "," $5 } { prev = $2 }' >"$dir/diffs"
section "$dir/out.csv" Use >"$dir/use"
cmp -s "$dir/diffs" "$dir/use" || echo "FAIL: CpuUse is not the difference of CpuTime samples: $(diff "$dir/diffs" "$dir/use")" >>"$dir/fails"
section "$dir/out.csv" St | while IFS=, read -r p st c at; do
  [ "$st,$c" = "Running,$comm" ] || echo "FAIL: ProcessState at $at: $st,$c; the loop is always runnable, and ps calls it $comm"
done >>"$dir/fails"
[ "$(section "$dir/out.csv" Ro | wc -l)" -eq 5 ] || bad "LastProcessor: not 5 samples on processors of this host"
if [ -s "$dir/fails" ]; then
  cat "$dir/fails"
  fails=$((fails + $(wc -l <"$dir/fails")))
fi
m=$(pmmsg "$dir/stats.json" host_cputime)
echo "host_cputime: $m"
[ "$m" = "reads=5 failed=0 pids=1 [$pid]" ] || bad "host_cputime: $m"

grep -q "Sanitizer\|runtime error" "$dir/err" && bad "sanitizer: $(cat "$dir/err")"
[ $fails -eq 0 ] || exit 1
echo ok
