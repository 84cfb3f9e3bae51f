#!/bin/sh
# kernel_reuse.sh - thread ids are reused by the kernel; each incarnation of
# an id in a run is its own entity ("1234", then "1234#2"), so that what one
# thread did is never another's.  The workload forks a child that exits
# with 5, then makes the kernel give the same id to the next child
# (ns_last_pid), which exits with 7.  The two exits must go to two
# entities, each with its own code.  Skipped (with the reason) when, on a
# machine busy forking, the id went to someone else 20 times in a row.
set -u
KORACLE=
. tests/kernel/lib.sh
kcheck
[ -w /proc/sys/kernel/ns_last_pid ] || { echo "skipped: /proc/sys/kernel/ns_last_pid is not writable"; exit 77; }
d=$OUT/kernel_reuse
rm -rf "$d" && mkdir -p "$d"
kstart "$d" reuse || exit 1
sed -e "s/REUSE/$reuse/g" tests/kernel/reuse.tq >"$d/q.tq"
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"
eval "$(cat "$d/ids1.after")"
if [ "$reused" != 1 ]; then
  echo "skipped: the id $child went to another process 20 times (a machine busy forking)"
  exit 77
fi
section "$d/out.csv" Exits | grep -E "^$child(#2)?," | tee "$d/exits"
grep -q "^$child,5," "$d/exits" || bad "the first child $child: no Exit with code 5"
grep -q "^$child#2,7," "$d/exits" || bad "the second child with id $child: no Exit of $child#2 with code 7"
[ "$(wc -l <"$d/exits")" -eq 2 ] || bad "not two exits for the id $child"
section "$d/out.csv" Children | tee "$d/children"
[ "$(grep -c "^$child" "$d/children")" -eq 2 ] || bad "the parent's two children with the same id are not two entities"
[ $fails -eq 0 ] && echo ok
exit $fails
