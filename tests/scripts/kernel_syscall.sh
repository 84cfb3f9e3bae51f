#!/bin/sh
# kernel_syscall.sh - Syscall on deterministic workloads: a process that
# sleeps 50 ms once (one clock_nanosleep interval of at least 50 ms) and one
# that calls getppid N times (N intervals).  The sleeper is named by its
# process (a query about one process is about its threads: the semi-join
# with Thread) and the caller by its thread.  Checked against bpftrace on
# the per-call tracepoints (syscalls:sys_enter_*, another path into the
# kernel than the raw_syscalls tracepoints tqmon attaches) in the same run:
# the same counts, and the same duration within 5 ms.
set -u
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_syscall
rm -rf "$d" && mkdir -p "$d"
N=1000
kstart "$d" sleep 50 || exit 1
kstart "$d" syscalls $N || exit 1
until="$sleeper+$caller"
sed -e "s/SLEEPER/$sleeper/g" -e "s/CALLER/$caller/g" tests/kernel/syscall.tq >"$d/q.tq"
sed -e "s/SLEEPER/$sleeper/g" -e "s/CALLER/$caller/g" tests/kernel/syscall.bt >"$d/q.bt"
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"

sleeps=$(section "$d/out.csv" SleeperCalls | grep -c ",clock_nanosleep,")
same "clock_nanosleep calls of the sleeper" "$sleeps" "$(obs "$d" sleeps)" 1
section "$d/out.csv" SleeperCalls | grep ",clock_nanosleep," | while IFS=, read -r th call from to; do
  us=$(((to - from) / 1000))
  bt=$(obs "$d" us)
  echo "clock_nanosleep: $us us (bpftrace $bt us)"
  [ "$us" -ge 50000 ] || echo "FAIL: the 50 ms sleep took $us us"
  diff=$((us - bt))
  [ ${diff#-} -le 5000 ] || echo "FAIL: the sleep took $us us, bpftrace says $bt us"
done | tee "$d/sleep" | grep -q FAIL && bad "$(grep FAIL "$d/sleep")"
# the sleeper ends in exit_group, which never returns: closed at its exit
section "$d/out.csv" SleeperCalls | grep -q ",exit_group," || bad "no exit_group of the sleeper"
section "$d/out.csv" SleeperCalls | awk -F, '$4 == ""' | grep -q . && bad "a system call of the sleeper is still open"
same "getppid calls of the caller" "$(section "$d/out.csv" CallerCalls | grep -c "^getppid,")" "$(obs "$d" getppid)" $N
msg=$(pmmsg "$d/stats.json" kernel_syscall)
echo "kernel_syscall: $msg"
[ "$(field "$msg" dropped)" = 0 ] || bad "packets dropped: $msg"
[ "$(field "$msg" enabled_max)" -le 2 ] || bad "Syscall enabled on more threads than the sleeper and the caller: $msg"
[ $fails -eq 0 ] && echo ok
exit $fails
