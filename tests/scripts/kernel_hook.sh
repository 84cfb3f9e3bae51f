#!/bin/sh
# kernel_hook.sh - the two hooks of Syscall: fentry and fexit on the system
# call dispatchers (x64_sys_call, ia32_sys_call; Linux 6.9 on x86-64) where
# the kernel lets them load, else the raw_syscalls tracepoints
# (--pm kernel=syscalls=fentry|tracepoint|auto, sensors/kernel.md).  Each
# hook the kernel allows runs the workload of kernel_syscall.sh (a 50 ms
# sleep, N getppid calls) and must give the same exact answer, checked
# against bpftrace on the per-call tracepoints, and say in --stats which
# hook it used.  The fallback is run on every kernel: with fentry on
# x64_sys_call hidden (TQMON_KERNEL_HIDE), auto takes the tracepoints and
# says why, and syscalls=fentry refuses to start.  A kernel that refuses
# fentry (here: a policy that denies it) has its fentry run skipped, with
# the kernel's reason printed.
set -u
. tests/kernel/lib.sh
kcheck
N=500

# explain's line for Syscall under ARGS (the hook a run would take)
hookOf() {
  $T explain --kernel --pm "kernel=$1" sensors/kernel.tq "$OUT/kernel_hook/probe.tq" 2>&1 | grep -m1 "sensor: Syscall by"
}
mkdir -p "$OUT/kernel_hook"
sed -e "s/SLEEPER/1/g" -e "s/CALLER/1/g" tests/kernel/syscall.tq >"$OUT/kernel_hook/probe.tq"
line=$(hookOf syscalls=fentry)
echo "explain, syscalls=fentry: $line"
case $line in
  *"fentry:x64_sys_call, fexit:x64_sys_call"*) fentry=1 ;;
  *"on the raw_syscalls tracepoints: fentry on x64_sys_call: "*) fentry=0 ;;
  *) bad "explain does not say which hook Syscall takes: $line"; fentry=0 ;;
esac
line=$(hookOf syscalls=auto)
case $fentry:$line in
  1:*fexit:x64_sys_call*) echo "ok: auto takes fentry" ;;
  0:*"kernel tracepoints raw_syscalls:sys_enter, raw_syscalls:sys_exit"*"on the raw_syscalls tracepoints: fentry on x64_sys_call"*)
    echo "ok: auto takes the tracepoints" ;;
  *) bad "auto: $line" ;;
esac

# run HOOK ARGS [ENV]: the workload of kernel_syscall.sh under --pm kernel=...ARGS
run() {
  h=$1
  d=$OUT/kernel_hook/$h
  rm -rf "$d" && mkdir -p "$d"
  kpid="" kpids="" nk=0
  kstart "$d" sleep 50 || return 1
  kstart "$d" syscalls $N || return 1
  until="$sleeper+$caller"
  sed -e "s/SLEEPER/$sleeper/g" -e "s/CALLER/$caller/g" tests/kernel/syscall.tq >"$d/q.tq"
  sed -e "s/SLEEPER/$sleeper/g" -e "s/CALLER/$caller/g" tests/kernel/syscall.bt >"$d/q.bt"
  koracle "$d" "$d/q.bt" || return 1
  kargs=",$2" ktqmon "$d" "$d/q.tq" || return 1
  kgo "$d"
  same "$h: getppid calls of the caller" "$(section "$d/out.csv" CallerCalls | grep -c "^getppid,")" "$(obs "$d" getppid)" $N
  same "$h: clock_nanosleep calls of the sleeper" "$(section "$d/out.csv" SleeperCalls | grep -c ",clock_nanosleep,")" \
    "$(obs "$d" sleeps)" 1
  section "$d/out.csv" SleeperCalls | grep ",clock_nanosleep," | while IFS=, read -r th call from to; do
    [ $((to - from)) -ge 50000000 ] || echo "FAIL: the 50 ms sleep took $((to - from)) ns"
  done | grep FAIL && bad "$h: the sleep is too short"
  section "$d/out.csv" SleeperCalls | grep -q ",exit_group," || bad "$h: no exit_group of the sleeper"
  section "$d/out.csv" SleeperCalls | awk -F, '$4 == ""' | grep -q . && bad "$h: a system call of the sleeper is still open"
  msg=$(pmmsg "$d/stats.json" kernel_syscall)
  echo "$h: kernel_syscall: $msg"
  [ "$(field "$msg" dropped)" = 0 ] || bad "$h: packets dropped: $msg"
  [ "$(field "$msg" hook)" = "$3" ] || bad "$h: the run says hook=$(field "$msg" hook), expected $3"
  grep -q "\"hook\": \"$3\"" "$d/stats.json" || bad "$h: --stats has no \"hook\": \"$3\""
}

run tracepoint syscalls=tracepoint tracepoint
grep -q '"hook_why": "--pm kernel=syscalls=tracepoint"' "$OUT/kernel_hook/tracepoint/stats.json" ||
  bad "tracepoint: --stats does not say why"
if [ $fentry = 1 ]; then
  run fentry syscalls=fentry fentry
else
  echo "fentry: not run: $(hookOf syscalls=fentry | sed 's/.*on the raw_syscalls tracepoints: //')"
fi
# the fallback: fentry on x64_sys_call hidden
TQMON_KERNEL_HIDE=x64_sys_call
export TQMON_KERNEL_HIDE
run fallback syscalls=auto tracepoint
grep -q '"hook_why": "fentry on x64_sys_call: hidden' "$OUT/kernel_hook/fallback/stats.json" ||
  bad "fallback: --stats does not say why the tracepoints: $(grep -o '"hook[^,]*' "$OUT/kernel_hook/fallback/stats.json")"
d=$OUT/kernel_hook/refused
mkdir -p "$d"
sleep 60 &
sl=$!
kpid=$sl
sed -e "s/SLEEPER/$sl/g" -e "s/CALLER/$sl/g" tests/kernel/syscall.tq >"$d/q.tq"
$T run sensors/kernel.tq "$d/q.tq" --pm clock=realtime --pm kernel=until=$sl,syscalls=fentry --quiet >"$d/out" 2>"$d/err"
rc=$?
kill $sl
wait $sl 2>/dev/null
kpid=""
if [ $rc = 1 ] && grep -q "kernel=syscalls=fentry: fentry on x64_sys_call: hidden" "$d/err"; then
  echo "ok: syscalls=fentry, fentry hidden: refused: $(cat "$d/err")"
else
  bad "syscalls=fentry with fentry hidden: exit $rc, $(cat "$d/err")"
fi
$T run sensors/kernel.tq "$d/q.tq" --pm clock=realtime --pm kernel=until=1,syscalls=kprobe --quiet >"$d/out" 2>"$d/err"
rc=$?
[ $rc = 1 ] && grep -q "syscalls=kprobe: say fentry, tracepoint or auto" "$d/err" || bad "syscalls=kprobe: exit $rc, $(cat "$d/err")"
[ $fails -eq 0 ] && echo ok
exit $fails
