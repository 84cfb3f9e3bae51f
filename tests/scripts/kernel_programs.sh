#!/bin/sh
# kernel_programs.sh - a program list (`monitor programs "ktl*"`) with the
# kernel sensors: two copies of the same workload, each calling getppid N
# times, one under a name the list matches and one under another name.
# Only the named process's threads become Thread entities, so only its
# system calls are traced: N getppid calls of it, none of the other, which
# made the same calls in the same run; the kernel's message counts the
# threads the list left out (unwanted=), and the Syscall sensor was
# enabled on no more than the named process's thread, and the kernel wrote
# at least the other's 2N packets fewer than without the list.  Without the list
# (a second run of both workloads) the other's thread and calls are there too.
set -u
KORACLE= # the workload's own count is the observation here: no bpftrace
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_programs
rm -rf "$d" && mkdir -p "$d"
N=500
tag=$(printf '%04x' $(($$ % 65536)))
cp build/kwork "$d/ktl$tag"
cp build/kwork "$d/kto$tag"

# run LIST: both workloads under tqmon, with the program list LIST ("" none)
run() {
  kpid="" kpids="" nk=0
  rm -f "$d/out.csv" "$d/stats.json"
  K="$d/ktl$tag" kstart "$d" syscalls $N || exit 1
  listed=$caller
  K="$d/kto$tag" kstart "$d" syscalls $N || exit 1
  other=$caller
  until="$listed+$other"
  { [ -n "$1" ] && echo "monitor programs \"$1\";"
    sed -e "s/LISTED/$listed/g" -e "s/OTHER/$other/g" tests/kernel/programs.tq; } >"$d/q.tq"
  ktqmon "$d" "$d/q.tq" || exit 1
  kgo "$d"
  cp "$d/out.csv" "$d/out.$2.csv"
  cp "$d/stats.json" "$d/stats.$2.json"
}

run "ktl$tag*" list
calls() { section "$d/out.$1.csv" Calls | grep -c "^$2,getppid,"; }
n=$(calls list "$listed")
[ "$n" -eq $N ] || bad "getppid calls of the named process ktl$tag: $n, expected $N"
n=$(calls list "$other")
[ "$n" -eq 0 ] || bad "getppid calls of kto$tag, which the list does not name: $n, expected none"
section "$d/out.list.csv" Threads | grep -q "^$listed,$listed,ktl$tag," || bad "no Thread of the named process $listed"
section "$d/out.list.csv" Threads | grep -q ",$other," && bad "a Thread of kto$tag, which the list does not name"
msg=$(pmmsg "$d/stats.list.json" kernel_thread)
echo "kernel_thread: $msg"
[ "$(field "$msg" unwanted)" -ge 1 ] || bad "the threads the list left out are not counted: $msg"
msg=$(pmmsg "$d/stats.list.json" kernel_syscall)
echo "kernel_syscall: $msg"
[ "$(field "$msg" enabled_max)" -le 1 ] || bad "Syscall enabled on more threads than the named process's: $msg"
wl=$(field "$msg" written)

run "" all
[ "$(calls all "$listed")" -eq $N ] || bad "without a list: getppid calls of ktl$tag: $(calls all "$listed")"
[ "$(calls all "$other")" -eq $N ] || bad "without a list: getppid calls of kto$tag: $(calls all "$other")"
msg=$(pmmsg "$d/stats.all.json" kernel_thread)
echo "$msg" | grep -q unwanted= && bad "without a list, the message counts unwanted threads: $msg"
# the other's N calls (an enter and an exit packet each) never left the kernel with the list
wa=$(field "$(pmmsg "$d/stats.all.json" kernel_syscall)" written)
echo "Syscall packets written by the kernel: $wl with the list, $wa without"
[ $((wa - wl)) -ge $((2 * N)) ] || bad "the kernel wrote the other process's calls with the list too: $wl packets, $wa without it"
[ $fails -eq 0 ] && echo ok
exit $fails
