#!/bin/sh
# kernel_life.sh - Fork, Exec, Exit and Thread on a deterministic workload
# (build/kwork life): a thread that renames itself, a child that executes
# /bin/true, one that exits with 3, one killed by SIGKILL.  The answers are
# checked against what the workload says became of its children and
# against bpftrace on the same tracepoints in the same run.  The children
# live for less than a snapshot: their events come from the flags they
# inherit in the kernel at their fork.
set -u
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_life
rm -rf "$d" && mkdir -p "$d"
kstart "$d" life || exit 1
sed -e "s/LIFE/$life/g" tests/kernel/life.tq >"$d/q.tq"
sed -e "s/LIFE/$life/g" tests/kernel/life.bt >"$d/q.bt"
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"
eval "$(cat "$d/ids1.after")" # thread= true= three= killed=

forks=$(section "$d/out.csv" Forks | grep -c "^$life,")
same "forks by the workload" "$forks" "$(obs "$d" forks)" 4
for c in $thread $true $three $killed; do
  section "$d/out.csv" Forks | grep -q "^$life,$c," || bad "no Fork of $c by $life"
done
same "execs of its children" "$(section "$d/out.csv" Execs | grep -c "^$true,")" "$(obs "$d" execs)" 1
section "$d/out.csv" Execs | grep -q "^$true,/bin/true," || bad "no Exec of /bin/true by $true"
exits=$(section "$d/out.csv" Exits | grep -cE "^($life|$thread|$true|$three|$killed),")
same "exits of the workload and its children" "$exits" "$(obs "$d" exits)" 5
for pc in "$thread 0" "$true 0" "$three 3" "$killed -9" "$life 0"; do
  set -- $pc
  section "$d/out.csv" Exits | grep -q "^$1,$2," || bad "Exit of $1: not code $2 ($(section "$d/out.csv" Exits | grep "^$1,"))"
done
# bpftrace's exit_code of each, as tqmon decodes it
grep '^@code\[' "$d/oracle.out" | sed 's/^@code\[\([0-9]*\)\]: \([0-9]*\)$/\1 \2/' | while read -r pid raw; do
  if [ $((raw & 127)) -ne 0 ]; then want=$((0 - (raw & 127))); else want=$(((raw >> 8) & 255)); fi
  section "$d/out.csv" Exits | grep -q "^$pid,$want," || echo "FAIL: Exit of $pid: bpftrace says status $raw"
done | tee "$d/codes" | grep -q FAIL && bad "$(cat "$d/codes")"
threads=$(section "$d/out.csv" Threads | cut -d, -f1-3 | sort -u | tr '\n' ' ')
echo "threads of $life: $threads"
echo "$threads" | grep -q "$thread,$life,life-thread" || bad "Thread: the thread $thread is not named life-thread"
echo "$threads" | grep -q "$life,$life,kwork" || bad "Thread: the main thread $life is not named kwork"
[ "$(section "$d/out.csv" Threads | awk -F, '$5 == ""' | wc -l)" -eq 0 ] || bad "a thread of $life is still alive in the answer"
[ $fails -eq 0 ] && echo ok
exit $fails
