#!/bin/sh
# pcp_kernel.sh - the kernel's relation Syscall served by pmdatqmon (its
# -k: sensors/pmdatqmon.md, "The kernel's relations"), enabled remotely per
# thread through pmcd.  A pmcd of the test's own runs the agent with -k;
# three workloads (tests/kernel/kwork.c) wait for the go: two that call
# getppid N times (caller1, caller2) and one that sleeps 300 ms in one
# clock_nanosleep (sleeper).  A client of the agent (tests/pcp/tqpcpclient)
# enables Syscall on caller1 and the sleeper only, and bpftrace counts the
# same calls on the per-call tracepoints (another path than the
# raw_syscalls tracepoints the agent's programs are on):
#   - caller1's getppid records through the agent are N, as bpftrace's;
#   - selective: the agent wrote and sent records of caller1 and the sleeper
#     only (tqmon.entity.written), none of caller2 (whose N calls bpftrace
#     saw), and every record is of one of the two;
#   - the sleeper's clock_nanosleep begins at its time, though it returns
#     300 ms later (the agent claims a call open past its reorder window):
#     its duration at least 300 ms, within 5 ms of bpftrace's;
#   - the client gone, its enables are released (tqmon.entity.enabled 0).
set -u
AG=${AG:-build/asan/pmdatqmon}
CL=${CL:-build/asan/tqpcpclient}
. tests/kernel/lib.sh
kcheck
. tests/pcp/lib.sh
pcpKernelSetup
pids=""
trap 'kcleanup; progsStop $pids; pcpStopAll' EXIT
td=$OUT/pcp_kernel
rm -rf "$td" && mkdir -p "$td"
pcpKernelStart || exit 1
pminfo -h "$H" -f tqmon.program.catalog >"$td/catalog" 2>&1
grep -q 'Syscall interval entity,string flag=0' "$td/catalog" || bad "the kernel's catalog: $(cat "$td/catalog")"

N=2000
kstart "$td" syscalls $N || exit 1
c1=$caller
kstart "$td" syscalls $N || exit 1
c2=$caller
kstart "$td" sleep 300 || exit 1
s1=$sleeper
cat >"$td/q.bt" <<EOF
tracepoint:syscalls:sys_enter_getppid /tid == $c1/ { @c1 = count(); }
tracepoint:syscalls:sys_enter_getppid /tid == $c2/ { @c2 = count(); }
tracepoint:syscalls:sys_enter_clock_nanosleep /tid == $s1/ { @t = nsecs; }
tracepoint:syscalls:sys_exit_clock_nanosleep /tid == $s1 && @t/ { @us = (nsecs - @t) / 1000; }
tracepoint:sched:sched_process_exit /args->pid == $c1 || args->pid == $c2 || args->pid == $s1/ { @exits = @exits + 1; if (@exits == 3) { exit(); } }
EOF
koracle "$td" "$td/q.bt" || exit 1
$CL -h "$H" -i 50 -w "$td/done" "set kernel/Syscall $c1 1" "set kernel/Syscall $s1 1" >"$td/client.out" 2>"$td/client.err" &
cl=$!
pids="$cl"
waitfor "$td/client.out" "^# enabled" 60 || { bad "the client did not enable: $(cat "$td/client.err")"; exit 1; }
touch "$td/go"
for p in $kpids $kpid; do wait $p || bad "a workload failed: $(cat "$td"/kwork*.out)"; done
wait $btpid || bad "bpftrace: exit $? $(cat "$td/oracle.err")"
# the agent releases what the kernel wrote 20 ms behind now: the sleeper's
# last call (exit_group never returns: its begin is claimed) comes last
waitfor "$td/client.out" "kind=2 id=[0-9]* $s1 exit_group" 60 || bad "the sleeper's exit_group never came"
pminfo -h "$H" -f tqmon.entity.written tqmon.entity.sent >"$td/counters" 2>&1
touch "$td/done"
wait $cl || bad "the client: exit $? $(cat "$td/client.err")"
pids=""

# ---------------------------------------------------------------- the answers
got=$(grep -c "^kernel/Syscall [0-9.]* kind=3 id=[0-9]* from=[0-9]* $c1 getppid$" "$td/client.out")
same "getppid calls of caller1 through the agent" "$got" "$(obs "$td" c1)" $N
[ "$(obs "$td" c2)" = $N ] || bad "bpftrace saw $(obs "$td" c2) getppid calls of caller2, not $N"
others=$(grep "^kernel/Syscall " "$td/client.out" | awk -v a="$c1" -v b="$s1" '$5 != a && $5 != b && $6 != a && $6 != b' | head -3)
[ -z "$others" ] || bad "records of other threads: $others"
# begins and ends pair, an end carries its begin's time
awk '$3 == "kind=2" { b[$4] = $2 } $3 == "kind=3" { split($5, f, "="); if (!($4 in b)) { print "an end without its begin: " $0; exit } delete b[$4] }' \
  "$td/client.out" | grep . && bad "unpaired records"
# the sleeper's call: its begin at its time
grep "^kernel/Syscall [0-9.]* kind=3 id=[0-9]* from=[0-9]* $s1 clock_nanosleep$" "$td/client.out" >"$td/sleep"
[ "$(grep -c . "$td/sleep")" = 1 ] || bad "the sleeper's clock_nanosleep: $(cat "$td/sleep")"
if [ -s "$td/sleep" ]; then
  read -r _ end _ _ from _ <"$td/sleep"
  us=$(python3 -c 'import sys; e = sys.argv[1].split("."); print((int(e[0]) * 10**9 + int(e[1]) - int(sys.argv[2].split("=")[1])) // 1000)' "$end" "$from")
  bt=$(obs "$td" us)
  diff=$((us - bt))
  echo "clock_nanosleep through the agent: $us us (bpftrace $bt us)"
  [ "$us" -ge 300000 ] && [ ${diff#-} -le 5000 ] || bad "the sleeper's call took $us us through the agent, $bt by bpftrace"
fi
# selective: the agent wrote and sent nothing of caller2
cat "$td/counters"
for t in $c1 $s1; do
  grep -q "\"kernel/Syscall/$t\"" "$td/counters" || bad "no packets of thread $t written"
done
w=$(sed -n "/^tqmon.entity.written/,/^$/s|^ *inst \[[0-9]* or \"kernel/Syscall/$c1\"\] value \(.*\)$|\1|p" "$td/counters")
[ "${w:-0}" -ge $((2 * N)) ] || bad "caller1's packets written: $w (its $N getppid calls are $((2 * N)) begins and ends)"
grep "\"kernel/Syscall/" "$td/counters" | grep -v "\"kernel/Syscall/\($c1\|$s1\)\"" | grep . && bad "packets of other threads written"
# released: the client is gone
v=$(pcpVal "$H" tqmon.entity.enabled "kernel/Syscall/$c1")
[ "$v" = 0 ] || bad "caller1's Syscall still enabled after the client left: '$v'"
grep -q "ERROR: AddressSanitizer\|runtime error" "$log" && bad "sanitizer: $(cat "$log")"
[ $fails -eq 0 ] || { echo "agent log:"; cat "$log"; }
exit $fails
