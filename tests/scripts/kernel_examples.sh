#!/bin/sh
# kernel_examples.sh - the questions of examples/kernel/, each on a workload
# this test starts itself (build/kwork), each answer checked against what
# the workload is:
#   woke.tq       a pipe ping-pong of N messages: the reader was woken by
#                 the writer N times, each wait from the wakeup to the run
#                 a positive span;
#   slowcalls.tq  a process that sleeps 50 ms: its clock_nanosleep is among
#                 the calls longer than 1 ms, and every call listed is;
#   blocked.tq    a process whose thread spins for 300 ms of CPU while its
#                 main thread sleeps 1 ms at a time: the spinner is seen
#                 running on a CPU at some 10 ms tick while the process is
#                 blocked.
set -u
KORACLE=
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_examples
rm -rf "$d" && mkdir -p "$d/woke" "$d/slow" "$d/blocked"

# which threads woke a process, and how long it then waited for a CPU
N=30
kpid= nk=0
kstart "$d/woke" pingpong $N || exit 1
sed "s/PID/$reader/g" examples/kernel/woke.tq >"$d/woke/q.tq"
ktqmon "$d/woke" "$d/woke/q.tq" || exit 1
kgo "$d/woke"
byWriter=$(section "$d/woke/out.csv" WokenBy | grep -c "^$writer,$reader,")
echo "woken by the writer: $byWriter of $N"
[ "$byWriter" -eq $N ] || bad "woke.tq: the reader woken by the writer $byWriter times, not $N"
section "$d/woke/out.csv" WokenBy | awk -F, '$4 == "" || $4 <= $3' | grep -q . && bad "woke.tq: a wait that is not a positive span"
section "$d/woke/out.csv" WokenBy | head -3

# which system calls of one process took longer than 1 ms
kpid= nk=0
kstart "$d/slow" sleep 50 || exit 1
sed "s/PID/$sleeper/g" examples/kernel/slowcalls.tq >"$d/slow/q.tq"
ktqmon "$d/slow" "$d/slow/q.tq" || exit 1
kgo "$d/slow"
section "$d/slow/out.csv" SlowCalls | grep -q "^$sleeper,clock_nanosleep," || bad "slowcalls.tq: no clock_nanosleep"
section "$d/slow/out.csv" SlowCalls | awk -F, '$4 != "" && $4 - $3 < 1000000' | grep -q . && bad "slowcalls.tq: a call under 1 ms"
section "$d/slow/out.csv" SlowCalls | grep -v "^$sleeper," | grep -q . && bad "slowcalls.tq: a call of another thread"
section "$d/slow/out.csv" SlowCalls | grep clock_nanosleep

# what ran on each CPU every 10 ms while a process was blocked
kpid= nk=0
kstart "$d/blocked" spin 300 || exit 1
sed "s/PID/$spin/g" examples/kernel/blocked.tq >"$d/blocked/q.tq"
ktqmon "$d/blocked" "$d/blocked/q.tq" || exit 1
kgo "$d/blocked"
rows=$(section "$d/blocked/out.csv" WhileBlocked | wc -l)
spinner=$(section "$d/blocked/out.csv" WhileBlocked | grep -c ",spinner,$spin,")
echo "ticks while blocked: $rows rows, $spinner with the spinner running"
[ "$spinner" -gt 0 ] || bad "blocked.tq: the spinner never seen running while the process was blocked"
section "$d/blocked/out.csv" WhileBlocked | cut -d, -f1 | sort -u | while read -r cpu; do
  [ -d "/sys/devices/system/cpu/$cpu" ] || echo "FAIL: blocked.tq: $cpu is no CPU here"
done | tee "$d/blocked/cpus" | grep -q FAIL && bad "$(cat "$d/blocked/cpus")"
section "$d/blocked/out.csv" WhileBlocked | head -3
[ $fails -eq 0 ] && echo ok
exit $fails
