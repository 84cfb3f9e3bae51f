#!/bin/sh
# kernel_sched.sh - the scheduler relations (Woke, RunningOn, Ready,
# Blocked) and Thread on a deterministic workload: two processes ping-pong N
# messages over pipes, and each writes only once the other sleeps in its
# read.  The reader is therefore woken by the writer exactly N times.  The
# answers of tests/kernel/pingpong.tq are checked against bpftrace counting
# the same tracepoints for the same threads in the same run
# (tests/kernel/pingpong.bt), and against what the workload is: the Thread
# tuples name both processes with their commands, and Processor the online
# CPUs.
set -u
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_sched
rm -rf "$d" && mkdir -p "$d"
N=50
kstart "$d" pingpong $N || exit 1
sed -e "s/READER/$reader/g" -e "s/WRITER/$writer/g" tests/kernel/pingpong.tq >"$d/q.tq"
sed -e "s/READER/$reader/g" -e "s/WRITER/$writer/g" tests/kernel/pingpong.bt >"$d/q.bt"
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"

woke=$(section "$d/out.csv" Woken | grep -c "^$writer,$reader,")
same "wakeups of the reader by the writer" "$woke" "$(obs "$d" woke)" $N
same "wakeups of the reader" "$(section "$d/out.csv" Woken | wc -l)" "$(obs "$d" wokeall)"
same "RunningOn intervals of the reader" "$(section "$d/out.csv" Ran | wc -l)" "$(obs "$d" runs)"
same "Ready intervals of the reader (one before each run)" "$(section "$d/out.csv" Readied | wc -l)" "$(obs "$d" runs)"
same "Blocked intervals of the reader (Sleeping)" "$(section "$d/out.csv" Slept | grep -c ',Sleeping,')" "$(obs "$d" sleeps)"
# every RunningOn names a CPU of this machine
section "$d/out.csv" Ran | cut -d, -f2 | sort -u | while read -r cpu; do
  [ -d "/sys/devices/system/cpu/${cpu}" ] || echo "FAIL: RunningOn on $cpu, which is no CPU here"
done | tee "$d/cpus" | grep -q FAIL && bad "RunningOn names a CPU that does not exist"
# the threads: the writer and the reader, with their names, as the kernel says
threads=$(section "$d/out.csv" Threads | cut -d, -f1-3 | sort -u | tr '\n' ' ')
echo "threads: $threads"
echo "$threads" | grep -q "$writer,$writer,pp-writer" || bad "Thread: no tuple for the writer named pp-writer"
echo "$threads" | grep -q "$reader,$reader,pp-reader" || bad "Thread: no tuple for the reader named pp-reader"
# the processors: the online CPUs
want=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++) printf "cpu%d\n", c } }' \
  /sys/devices/system/cpu/online | sort | tr '\n' ' ')
got=$(section "$d/out.csv" Cpus | cut -d, -f1 | sort -u | tr '\n' ' ')
[ "$got" = "$want" ] || bad "Processor: $got, the online CPUs are $want"
# every interval the reader had is closed by the end (it exited)
section "$d/out.csv" Ran | awk -F, '$4 == ""' | grep -q . && bad "a RunningOn interval of the reader is still open"
msg=$(pmmsg "$d/stats.json" kernel_woke)
echo "kernel_woke: $msg"
[ "$(field "$msg" dropped)" = 0 ] || bad "packets dropped: $msg"
[ "$(field "$msg" enabled_max)" = 1 ] || bad "Woke enabled on more than the reader: $msg"
[ $fails -eq 0 ] && echo ok
exit $fails
