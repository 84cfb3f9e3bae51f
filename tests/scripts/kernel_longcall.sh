#!/bin/sh
# kernel_longcall.sh - a system call open across snapshots.  The kernel
# writes a system call as one packet at its return (sensors/kernel.md:
# Syscall); a call still open at a snapshot is claimed from the kernel's
# table of begins, so that the snapshot sees it open.  A process sleeps
# 2.5 s (clock_nanosleep over at least two snapshots of 1 s) and then
# calls getppid N times: the sleep is answered once, whole, with no packet
# late for its snapshot and none dropped; bpftrace on the per-call
# tracepoints counts the same calls in the same run.
set -u
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_longcall
rm -rf "$d" && mkdir -p "$d"
N=500
kstart "$d" sleep 2500 || exit 1
kstart "$d" syscalls $N || exit 1
until="$sleeper+$caller"
sed -e "s/SLEEPER/$sleeper/g" -e "s/CALLER/$caller/g" tests/kernel/syscall.tq >"$d/q.tq"
sed -e "s/SLEEPER/$sleeper/g" -e "s/CALLER/$caller/g" tests/kernel/syscall.bt >"$d/q.bt"
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"

same "clock_nanosleep calls of the sleeper" "$(section "$d/out.csv" SleeperCalls | grep -c ",clock_nanosleep,")" "$(obs "$d" sleeps)" 1
section "$d/out.csv" SleeperCalls | grep ",clock_nanosleep," | while IFS=, read -r th call from to; do
  us=$(((to - from) / 1000))
  echo "clock_nanosleep: $us us (bpftrace $(obs "$d" us) us)"
  [ "$us" -ge 2500000 ] || echo "FAIL: the 2.5 s sleep took $us us"
done | tee "$d/sleep" | grep -q FAIL && bad "$(grep FAIL "$d/sleep")"
same "getppid calls of the caller" "$(section "$d/out.csv" CallerCalls | grep -c "^getppid,")" "$(obs "$d" getppid)" $N
msg=$(pmmsg "$d/stats.json" kernel_syscall)
echo "kernel_syscall: $msg"
[ "$(field "$msg" late)" = 0 ] || bad "packets late for their snapshot (an open call not claimed): $msg"
[ "$(field "$msg" dropped)" = 0 ] || bad "packets dropped: $msg"
[ $fails -eq 0 ] && echo ok
exit $fails
