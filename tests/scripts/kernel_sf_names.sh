#!/bin/sh
# kernel_sf_names.sh - rule SF in the kernel (docs/enabling.md) on a
# constant that only looks like a name the kernel sensors give: the engine
# compares names, so RunningOn's `Processor <> "cpu00"` holds on every CPU
# ("cpu0" is not "cpu00"), and the BPF program must not read "cpu00" as CPU
# 0 and drop the begins on cpu0 (it did: the answer missed every interval
# on cpu0, and said nothing).  The workload: SPIN, whose spinner thread
# computes on cpu0, then on cpu1 (kwork hop).  Two monitors trace the same
# run at once, one with the rule and one with --no-rule SF: both must have
# the spinner on cpu0, and the same number of its intervals there.
set -u
. tests/kernel/lib.sh
KORACLE=
kcheck
d=$OUT/kernel_sf_names
rm -rf "$d" && mkdir -p "$d/sf" "$d/nosf"
kstart "$d" hop 400 || exit 1
cat >"$d/q.tq" <<EOF
range of O is RunningOn
range of X is Thread
retrieve into NotCpu00 (O.Thread, O.Processor) where O.Thread = X.Thread and X.Process = $spin and O.Processor <> "cpu00"
EOF
ktqmon "$d/sf" "$d/q.tq" || exit 1
tqsf=$tqpid
ktqmon "$d/nosf" "$d/q.tq" --no-rule SF || exit 1
ln -s nosf/err "$d/err" # (kgo looks at the log of the monitor it waits for)
kgo "$d"
wait $tqsf || bad "tqmon (sf): exit $? $(cat "$d/sf/err")"
grep -q "Sanitizer\|runtime error" "$d/sf/err" && bad "sanitizer report: $(cat "$d/sf/err")"
# on0 MODE: the spinner's intervals on cpu0 (its thread is made after the
# go: both monitors trace all of them)
on0() { section "$d/$1/out.csv" NotCpu00 | awk -F, -v main="$spin" '$1 != main && $2 == "cpu0"' | wc -l | tr -d ' '; }
a=$(on0 sf) b=$(on0 nosf)
[ "$b" -gt 0 ] || bad "nosf: the spinner never ran on cpu0 (NotCpu00: $(section "$d/nosf/out.csv" NotCpu00 | head -3))"
[ "$a" = "$b" ] || bad "NotCpu00: $a intervals on cpu0 with rule SF, $b with --no-rule SF"
echo "NotCpu00: $a intervals on cpu0 with rule SF, $b without"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
