#!/bin/sh
# kernel_sf.sh - rule SF in the kernel sensors (docs/enabling.md): the
# selections of tests/kernel/sf.tq on Syscall's Call, Send's Bytes or Family
# (`or`, `<>`), Receive's Family and Bytes, BlockIo's Operation and
# RunningOn's Processor are checked by the BPF programs, which write only
# the packets that pass; Exit's Code by the PM (an exit's packet is written
# for Thread anyway).  Workloads: a caller making N getppid calls among
# its others, a sender sending M messages of 100 bytes over a Unix socket
# pair (none passes, every receive does), IO writing then reading IO blocks
# directly, and SPIN, whose spinner thread computes a while on cpu0, then
# on cpu1, and so on, while its main thread wakes every millisecond, and
# LIFE, whose children exit with 0, 3 and SIGKILL.
#
# Two monitors trace the same run at once: one with the rule, one with
# --no-rule SF (the previous optimizer: every packet written, the engine
# selects).  Their answers must be the same rows: the same values, each
# time within 1 ms of the other's (each monitor's BPF program reads the
# clock itself, in turn: one row in twenty, at least two, may be off more,
# a CPU interrupted or the VM's processor descheduled between the two); RunningOn's from the go on (before it, one monitor was
# tracing and the other not yet).  bpftrace counts the same events in the
# same run: tqmon's rows number its getppid calls, receives, write requests
# and the spinner's switches onto cpu0, and the kernel wrote only those
# (--stats: Send suppressed every send, BlockIo the reads, RunningOn at
# least the spinner's switches onto another CPU, Exit the other exits).
set -u
. tests/kernel/lib.sh
kcheck
N=300
M=200
IO=16
d=$OUT/kernel_sf
rm -rf "$d" && mkdir -p "$d/sf" "$d/nosf"
kstart "$d" syscalls $N || exit 1
kstart "$d" sockets $M 100 || exit 1
kstart "$d" blockio "$d" $IO || exit 1
kstart "$d" hop 300 || exit 1
kstart "$d" life || exit 1
until="$caller+$sockets+$io+$spin+$life"
sed -e "s/CALLER/$caller/g" -e "s/SENDER/$sockets/g" -e "s/= IO /= $io /" -e "s/SPIN/$spin/g" tests/kernel/sf.tq >"$d/q.tq"
sed -e "s/CALLER/$caller/g" -e "s/SENDER/$sockets/g" -e "s/== IO\b/== $io/g" -e "s/SPIN/$spin/g" -e "s/LIFE/$life/g" tests/kernel/sf.bt >"$d/q.bt"

# explain: every selection is checked in BPF (none left to the engine)
$T explain --kernel sensors/kernel.tq "$d/q.tq" >"$d/explain" 2>&1 || bad "explain: $(cat "$d/explain")"
grep -q "sensor: Exit by kernel_exit: .*; its filter (rule SF) is checked by this PM before it produces an event, not in BPF" \
  "$d/explain" || bad "explain does not say who checks Exit's filter: $(grep "sensor: Exit by" "$d/explain")"
for rel in Syscall Send Receive BlockIo RunningOn; do
  grep -q "sensor: $rel by kernel_[a-z]*: .*; the BPF program checks its filter (rule SF" "$d/explain" ||
    bad "explain does not say that the BPF program checks $rel's filter: $(grep "sensor: $rel by" "$d/explain")"
done

koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d/sf" "$d/q.tq" || exit 1
tqsf=$tqpid
kpids="${kpids:-} $kpid"
ktqmon "$d/nosf" "$d/q.tq" --no-rule SF || exit 1
ln -s nosf/err "$d/err" # (kgo looks at the log of the monitor it waits for)
kpid=""
kpids=${kpids# }
# kgo's workloads are $kpids; it waits for the second monitor, this for the first
kgo "$d"
wait $tqsf || bad "tqmon (sf): exit $? $(cat "$d/sf/err")"
grep -q "Sanitizer\|runtime error" "$d/sf/err" && bad "sanitizer report: $(cat "$d/sf/err")"
gons=$(stat -c %.9Y "$d/go" | tr -d .)

# rowsOf MODE NAME NTIMES [FROM]: the rows of result NAME (the last NTIMES
# columns are times), those that begin at FROM or later, by time
rowsOf() {
  section "$d/$1/out.csv" "$2" | awk -F, -v nt="$3" -v from="${4:-0}" '$(NF - nt + 1) >= from { print $(NF - nt + 1) "|" $0 }' |
    sort -t'|' -k1,1n | cut -d'|' -f2-
}
# rowsAgree NAME NTIMES [FROM]: the rows of NAME with and without the rule
# are the same tuples (values equal, times within 1 ms)
rowsAgree() {
  rowsOf sf "$1" "$2" "${3:-0}" >"$d/$1.sf.rows"
  rowsOf nosf "$1" "$2" "${3:-0}" >"$d/$1.nosf.rows"
  a=$(wc -l <"$d/$1.sf.rows" | tr -d ' ') b=$(wc -l <"$d/$1.nosf.rows" | tr -d ' ')
  if [ "$a" != "$b" ]; then
    bad "$1: $a rows with rule SF, $b with --no-rule SF"
    return
  fi
  # (a time more than 1 ms off is allowed in one row of twenty, at least
  # two: a CPU interrupted or the VM's processor descheduled between the
  # two monitors' programs on one hook, whose stamp may end one interval
  # and begin the next)
  diffs=$(paste -d'|' "$d/$1.sf.rows" "$d/$1.nosf.rows" | awk -F'|' -v nt="$2" -v n="$a" '{
      na = split($1, x, ","); split($2, y, ",")
      for (i = 1; i <= na; i++) {
        if (i <= na - nt) { if (x[i] != y[i]) { print NR ": " $0; next } }
        else { dt = x[i] - y[i]; if (dt < 0) dt = -dt; if (dt > 1000000) { far[++nf] = NR ": " $0; next } }
      }
    }
    END {
      if (nf > (n >= 60 ? int(n / 20) : 2)) for (i = 1; i <= nf; i++) print far[i] " (time more than 1 ms off)"
      else for (i = 1; i <= nf; i++) print "allowed: " far[i] > "/dev/stderr"
    }' | head -3)
  if [ -n "$diffs" ]; then bad "$1: rows differ with and without rule SF: $diffs"; else echo "ok: $1: the same $a rows with and without rule SF"; fi
}
stat1() { # MODE RELATION KEY: a figure of the kernel PM's --stats detail
  # (the PM's detail line of that relation: the lines of answers' loss
  # periods name a relation too)
  grep "\"relation\": \"$2\"" "$d/$1/stats.json" | grep "\"$3\": [0-9]" | sed "s/.*\"$3\": \([0-9]*\).*/\1/"
}

same "getppid calls of the caller" "$(rowsOf sf Ppid 2 | wc -l | tr -d ' ')" "$(obs "$d" getppid)" $N
rowsAgree Ppid 2
same "sends of more than 1000 bytes or not Unix" "$(rowsOf sf Sends 1 | wc -l | tr -d ' ')" 0 0
rowsAgree Sends 1
same "receives (Unix, 100 bytes)" "$(rowsOf sf Receives 1 | wc -l | tr -d ' ')" "$(obs "$d" recvs)" $M
rowsAgree Receives 1
if [ "$(obs "$d" ios)" = 0 ]; then
  echo "note: the build folder's file system issued no block request from the workload's thread (not a block device here?)"
else
  same "write requests" "$(rowsOf sf Writes 2 | wc -l | tr -d ' ')" "$(obs "$d" writes)" $IO
  rowsAgree Writes 2
  same "sf: BlockIo requests suppressed (the reads)" "$(stat1 sf BlockIo suppressed)" $(($(obs "$d" ios) - $(obs "$d" writes)))
fi
# (the spinner renames itself while it runs: the RunningOn interval across
# the rename meets two Thread tuples and makes two rows, the second
# beginning where the first ends; an interval is counted once)
spinRows=$(rowsOf sf OnCpu0 2 | grep -v "^$spin," | awk -F, '$(NF - 1) != last[$1] { n++ } { last[$1] = $NF } END { print n + 0 }')
same "the spinner's RunningOn intervals on cpu0" "$spinRows" "$(obs "$d" cpu0)"
rowsAgree OnCpu0 2 "$gons"
[ "$(rowsOf nosf OnCpu0 2 | cut -d, -f2 | sort -u | grep -v '^cpu0$')" = "" ] || bad "nosf: OnCpu0 holds another CPU"

# the exits with code 3 from the go on (the machine's too): LIFE's child
eval "$(cat "$d"/ids*.after)"
rowsAgree Exit3 1 "$gons"
grep -q "^$three,3," "$d/Exit3.sf.rows" || bad "Exit3: no exit of $three with code 3"
esup=$(stat1 sf Exit suppressed)
[ "$esup" -ge 3 ] || bad "sf: $esup exits suppressed, LIFE's thread and two children exited with another code"
[ "$(stat1 nosf Exit suppressed)" = 0 ] || bad "nosf: Exit suppressed $(stat1 nosf Exit suppressed)"

# what the kernel wrote and suppressed
written=$(stat1 sf Syscall written) sup=$(stat1 sf Syscall suppressed) calls=$(obs "$d" calls)
# the caller's calls, begun: getppid written (a begin and an end each), the
# others suppressed (a call begun before the sensor was enabled is neither)
[ "$written" = $((2 * N)) ] || bad "sf: the kernel wrote $written Syscall packets, the caller made $N getppid calls"
[ "$sup" -gt 0 ] && [ "$sup" -le $((calls - N)) ] || bad "sf: $sup calls suppressed, the caller made $((calls - N)) others"
same "sf: sends suppressed" "$(stat1 sf Send suppressed)" "$(obs "$d" sends)" $M
same "sf: Send packets written" "$(stat1 sf Send written)" 0 0
same "sf: receives suppressed" "$(stat1 sf Receive suppressed)" 0 0
rsup=$(stat1 sf RunningOn suppressed) else0=$(obs "$d" elsewhere)
[ "$rsup" -ge "$else0" ] || bad "sf: $rsup RunningOn begins suppressed, the spinner alone went onto another CPU $else0 times"
grep -qF '"filter": "S.Call=\"getppid\""' "$d/sf/stats.json" || bad "sf: --stats shows no filter on Syscall"
for rel in Syscall Send Receive RunningOn; do
  [ "$(stat1 nosf $rel suppressed)" = 0 ] || bad "nosf: $rel suppressed $(stat1 nosf $rel suppressed)"
done
nw=$(stat1 nosf Syscall written)
[ "$nw" -gt $((2 * N)) ] || bad "nosf: the kernel wrote only $nw Syscall packets"
echo "sf: Syscall written $written, suppressed $sup; Send suppressed $(stat1 sf Send suppressed);" \
  "RunningOn written $(stat1 sf RunningOn written), suppressed $rsup (nosf: written $(stat1 nosf RunningOn written));" \
  "BlockIo suppressed $(stat1 sf BlockIo suppressed); Exit suppressed $esup"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
