#!/bin/sh
# kernel_late.sh - an enabling that reaches the kernel a snapshot late is
# said, not silent (sensors/kernel.md, Limits): rule O3 arms Syscall on the
# reader of a pipe ping-pong of 15000 messages (some seconds) when the
# writer first wakes it (tests/kernel/late.tq); the kernel's flag is set at
# the snapshot after that wakeup, so what the reader did in between never
# left the kernel.
# The run warns once, the end says how many times in all when more,
# --stats counts them, the answer that reads Syscall says it may be
# incomplete over each late period (late_enablings of Syscall); the writer's calls,
# enabled from the start by the semi-join, are none of them.
set -u
KORACLE=
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_late
rm -rf "$d" && mkdir -p "$d"
kstart "$d" pingpong 15000 || exit 1
sed -e "s/WRITER/$writer/g" tests/kernel/late.tq >"$d/q.tq"
$T explain --trace --kernel --pm kernel=syscalls=tracepoint sensors/kernel.tq "$d/q.tq" >"$d/explain" 2>&1
grep -q '^O3: ' "$d/explain" || bad "explain: O3 does not fire on tests/kernel/late.tq"
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"
# (the first late enabling is a warning, each other one an info line at
# --trace-level 2: the writer may wake another thread first)
grep -q "warning: Syscall enabled on thread [0-9]* at the snapshot after what decided it" "$d/err" ||
  bad "no warning that Syscall reached a thread late: $(grep -v info "$d/err")"
grep -Eq "(warning|info): Syscall enabled on thread $reader at the snapshot after what decided it" "$d/err" ||
  bad "nothing says that Syscall reached the reader $reader late: $(grep -v info "$d/err")"
n=$(grep '"relation": "Syscall"' "$d/stats.json" | sed -n 's/.*"late_enablings": \([0-9]*\).*/\1/p')
[ "${n:-0}" -ge 1 ] || bad "--stats: late_enablings of Syscall is ${n:-none}"
grep "Syscall enabled on thread $writer " "$d/err" && bad "the writer, enabled from the start, was counted late"
# the answer that reads it says it may be incomplete (a loss of a count not
# known on the reader's thread, from the snapshot before the one that
# decided it to when the flag was set: docs/losses.md)
grep -q "warning: AfterWake may be incomplete from .*an unknown number of packets" "$d/err" ||
  bad "AfterWake is not marked incomplete: $(grep -v info "$d/err")"
rows=$(section "$d/out.csv" AfterWake | grep -c "^$reader,")
echo "late enablings: $n; the reader's calls after the writer woke it: $rows"
[ "$rows" -gt 0 ] || bad "AfterWake: no call of the reader"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
