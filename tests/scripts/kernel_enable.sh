#!/bin/sh
# kernel_enable.sh - enabling is in the kernel, measured: on a busy machine
# (another process calling getppid in a loop), a query about one process's
# system calls (tests/kernel/enable.tq, the semi-join with Thread) enables
# the sensor on that process's thread only.  The kernel's counters (--stats)
# show it: the tracepoint fired for both processes, and what was written is
# exactly that process's calls (a begin and an end each, but exit_group,
# which never returns), with as many getppid as bpftrace counts for its pid
# in the same run.
set -u
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_enable
rm -rf "$d" && mkdir -p "$d"
N=20000
kstart "$d" busy 600 || exit 1
busypid=$kpid
kpid=
kstart "$d" syscalls $N || exit 1
kpids= # the busy one is stopped below, not waited for
sed -e "s/CALLER/$caller/g" tests/kernel/enable.tq >"$d/q.tq"
sed -e "s/CALLER/$caller/g" -e "s/BUSY/$busypid/g" tests/kernel/enable.bt >"$d/q.bt"
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"
kill $busypid 2>/dev/null
wait $busypid 2>/dev/null

rows=$(section "$d/out.csv" Calls | grep -c "^$caller,")
same "getppid calls of the process asked about" "$(section "$d/out.csv" Calls | grep -c "^$caller,getppid,")" \
  "$(obs "$d" getppid)" $N
msg=$(pmmsg "$d/stats.json" kernel_syscall)
echo "kernel_syscall: $msg"
seen=$(field "$msg" seen) written=$(field "$msg" written)
echo "the busy process made $(obs "$d" busy) system calls meanwhile; the kernel saw $seen, wrote $written"
[ "$written" -eq $((2 * rows - 1)) ] || bad "the kernel wrote $written packets, not the $((2 * rows - 1)) of the process asked about"
[ "$seen" -gt $((rows + $(obs "$d" busy) / 2)) ] || bad "the tracepoint did not see the busy process's calls: $msg"
[ "$(field "$msg" enabled_max)" = 1 ] || bad "enabled on more than the one thread: $msg"
[ "$(field "$msg" dropped)" = 0 ] || bad "packets dropped: $msg"
[ $fails -eq 0 ] && echo ok
exit $fails
