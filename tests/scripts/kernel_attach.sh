#!/bin/sh
# kernel_attach.sh - a relation no query needs has no BPF program attached
# (sensors/kernel.md): while tqmon traces, the programs it holds are read
# from its own file descriptors (/proc/PID/fdinfo: a link's prog_id is an
# attached program; bpftool names it), not from the machine's list, which
# other monitors share.  A query about Syscall attaches the lifecycle's and
# Syscall's programs and none of the scheduler, block or socket programs;
# one about RunningOn attaches sched_switch's and no system call program.
# --stats says the same ("attached" in each kernel PM's detail).
set -u
KORACLE=
. tests/kernel/lib.sh
kcheck
command -v bpftool >/dev/null 2>&1 || { echo "skipped: bpftool (the BPF programs' names) is not installed"; exit 77; }
d=$OUT/kernel_attach
rm -rf "$d" && mkdir -p "$d"
LIFE="ks_fork ks_exec ks_exit ks_rename"
SYS="ks_sys_enter ks_sys_exit ks_fe_sys ks_fx_sys ks_fe_sys32 ks_fx_sys32"
SCHED="ks_switch ks_waking ks_wakeup ks_wakeup_new"
OTHER="ks_rq_issue ks_rq_complete ks_send ks_recv"

# attached DIR: the names of the BPF programs tqmon ($tqpid) has attached
attached() {
  for f in /proc/$tqpid/fdinfo/*; do
    grep -q '^link_type:' "$f" 2>/dev/null || continue
    sed -n 's/^prog_id:[[:space:]]*//p' "$f"
  done | sort -u | while read -r id; do
    bpftool prog show id "$id" 2>/dev/null | sed -n 's/.* name \([^ ]*\) .*/\1/p'
  done | sort -u >"$1/attached"
}
# check DIR WANT... -- NOT...: the programs attached hold one of WANT each
# group (a|b: either) and none of NOT
check() {
  cd1=$1
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    hit=""
    for n in $(echo "$1" | tr '|' ' '); do grep -qx "$n" "$cd1/attached" && hit=$n; done
    [ -n "$hit" ] || bad "$(basename "$cd1"): $1 is not attached ($(tr '\n' ' ' <"$cd1/attached"))"
    shift
  done
  [ $# -gt 0 ] && shift
  for n in "$@"; do
    grep -qx "$n" "$cd1/attached" && bad "$(basename "$cd1"): $n is attached, and no query needs it"
  done
  echo "$(basename "$cd1"): $(tr '\n' ' ' <"$cd1/attached")"
}

mkdir -p "$d/syscall" "$d/runningon"
kstart "$d/syscall" syscalls 100 || exit 1
sed -e "s/CALLER/$caller/g" tests/kernel/enable.tq >"$d/syscall/q.tq"
ktqmon "$d/syscall" "$d/syscall/q.tq" || exit 1
attached "$d/syscall"
# shellcheck disable=SC2086
check "$d/syscall" $LIFE "ks_sys_enter|ks_fe_sys" "ks_sys_exit|ks_fx_sys" -- $SCHED $OTHER
kgo "$d/syscall"
grep -q '"relation": "RunningOn", [^}]*"attached": false' "$d/syscall/stats.json" || bad "syscall: --stats does not say RunningOn's program is not attached"
grep -q '"relation": "Syscall", [^}]*"attached": true' "$d/syscall/stats.json" || bad "syscall: --stats does not say Syscall's programs are attached"

kpid="" nk=0
kstart "$d/runningon" syscalls 100 || exit 1
printf 'range of R is RunningOn\nretrieve (R.Processor) where R.Thread = "%s"\n' "$caller" >"$d/runningon/q.tq"
ktqmon "$d/runningon" "$d/runningon/q.tq" || exit 1
attached "$d/runningon"
# shellcheck disable=SC2086
check "$d/runningon" $LIFE ks_switch -- $SYS ks_waking ks_wakeup ks_wakeup_new $OTHER
kgo "$d/runningon"
grep -q '"relation": "Syscall", [^}]*"attached": false' "$d/runningon/stats.json" || bad "runningon: --stats does not say Syscall's programs are not attached"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
