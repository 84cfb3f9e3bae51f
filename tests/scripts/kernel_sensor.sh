#!/bin/sh
# kernel_sensor.sh - a relation with two real sensors, live (rule SENSOR,
# docs/enabling.md): RunningOn traced by the kernel (sensors/kernel.tq)
# and sampled from /proc by --pm host_runningon (RunningOn_sampled), which
# the user names: --host alone does not load it.
# The workload's thread is bound to the last CPU and computes for 4 s
# (kwork pinned) while its main thread waits for it.  tests/kernel/sensor.tq
# asks what the two threads ran on at each tick of the Clock (every second).
# Two monitors trace the same run at once:
#   - with the rule: the sampled sensor (explain says why: the costs), so
#     the kernel's RunningOn program is not even attached and writes
#     nothing, and host_runningon reads the threads' stat at the ticks;
#   - with --no-rule SENSOR: the traced sensor, and host_runningon reads
#     nothing; this one also answers Runs, the thread's RunningOn
#     intervals, from which the ticks it ran at follow (its Ticks must be
#     those).
# Where the answers must agree, they do: every tick well inside the spin
# has the thread on its CPU in the sampled answer (its state is R then:
# running or preempted), every tick of the traced answer is one of the
# sampled answer's (but at the spin's last second: the sample is read a
# little after its tick), both on the CPU the thread is bound to, and
# neither has the main thread running while it waits.  The spin's begin
# and end come from the workload (an observation of neither sensor).
# explain: the traced sensor where a query reads the intervals, and without
# --pm host_runningon (--host alone does not load it: its answer is near the
# traced one's, not the same) the sampled one "cannot be asked".
set -u
KORACLE=
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_sensor
rm -rf "$d" && mkdir -p "$d/sampled" "$d/traced"

$T explain --kernel --host --pm host_runningon --pm kernel=syscalls=tracepoint sensors/kernel.tq sensors/host.tq tests/kernel/explain/sensor.tq \
  >"$d/explain" 2>&1 || bad "explain: $(cat "$d/explain")"
grep -q "^  note: alpha^{S:T}_R: SENSOR: sampled sensor RunningOn_sampled, the cheaper: 22000 ns/s per target sampled at Clock\[1\] (22000 ns a sample) against 260000 ns/s traced (1300 ns x 200/s)" \
  "$d/explain" || bad "explain: EverySecond does not read the sampled sensor for its costs: $(grep note "$d/explain")"
grep -q "^  note: alpha^{T:T}_S: SENSOR: traced sensor RunningOn: the query reads S's intervals" "$d/explain" ||
  bad "explain: Runs does not say why it reads the traced sensor: $(grep note "$d/explain")"
grep -q "sensor: RunningOn_sampled by host_runningon" "$d/explain" || bad "explain: no host_runningon"
$T explain --kernel --pm kernel=syscalls=tracepoint sensors/kernel.tq tests/kernel/explain/sensor.tq >"$d/explain.kernel" 2>&1
grep -q "SENSOR: traced sensor RunningOn: its sampled sensor RunningOn_sampled (22000 ns/s sampled at Clock\[1\] against 260000 ns/s traced) cannot be asked" \
  "$d/explain.kernel" || bad "explain --kernel alone: $(grep note "$d/explain.kernel")"
# --host alone does not offer it: /proc's state R holds the threads waiting
# for a CPU too, so the sampled answer is near the traced one, not the same;
# a user who accepts that names the sensor (--pm host_runningon)
$T explain --kernel --host --pm kernel=syscalls=tracepoint sensors/kernel.tq sensors/host.tq tests/kernel/explain/sensor.tq \
  >"$d/explain.host" 2>&1
grep -q "SENSOR: traced sensor RunningOn: its sampled sensor RunningOn_sampled (22000 ns/s sampled at Clock\[1\] against 260000 ns/s traced) cannot be asked" \
  "$d/explain.host" || bad "explain --host without --pm host_runningon: the sampled sensor is asked: $(grep note "$d/explain.host")"

kstart "$d" pinned 4000 || exit 1
sed -e "s/SPINNER/$spinner/g" -e "s/PINNED/$pinned/g" tests/kernel/sensor.tq >"$d/q.tq"
ktqmon "$d/sampled" "$d/q.tq" --host --pm host_runningon sensors/host.tq || exit 1
tqs=$tqpid
kpids="${kpids:-} $kpid"
{
  cat "$d/q.tq"
  echo "retrieve into Runs (R.Thread, R.Processor) where R.Thread = \"$spinner\""
} >"$d/q2.tq"
ktqmon "$d/traced" "$d/q2.tq" --host --pm host_runningon sensors/host.tq --no-rule SENSOR || exit 1
kpid=""
kpids=${kpids# }
ln -s traced/err "$d/err" # (kgo looks at the log of the monitor it waits for)
kgo "$d"
wait $tqs || bad "tqmon (sampled): exit $? $(cat "$d/sampled/err")"
for m in sampled traced; do
  grep -E "error|Sanitizer|runtime error" "$d/$m/err" && bad "$m: errors (above)"
done
eval "$(cat "$d"/ids*.after)"

# the unchosen sensor wrote nothing
detail() { grep "{\"name\": \"$2\", \"calls\"" "$d/$1/stats.json"; }
msg() { detail "$1" "$2" | sed 's/.*"message": "\([^"]*\)".*/\1/'; }
detail sampled kernel_runningon | grep -q '"attached": false' || bad "sampled: the kernel's RunningOn program was attached"
[ "$(field "$(msg sampled kernel_runningon)" written)" = 0 ] || bad "sampled: the kernel wrote RunningOn packets: $(msg sampled kernel_runningon)"
reads=$(field "$(msg sampled host_runningon)" reads)
[ "${reads:-0}" -gt 0 ] || bad "sampled: host_runningon read nothing: $(msg sampled host_runningon)"
[ "$(field "$(msg traced host_runningon)" reads)" = 0 ] || bad "traced: host_runningon read: $(msg traced host_runningon)"
tw=$(field "$(msg traced kernel_runningon)" written)
[ "${tw:-0}" -gt 0 ] || bad "traced: the kernel wrote no RunningOn packet: $(msg traced kernel_runningon)"
echo "sampled: host_runningon $(msg sampled host_runningon); traced: kernel_runningon written $tw"

# the answers, where they must agree
ticks() { section "$d/$1/out.csv" Ticks | awk -F, -v t="$2" '$1 == t { print $3 }' | sort -n; }
ticks sampled "$spinner" >"$d/s.ticks"
ticks traced "$spinner" >"$d/t.ticks"
S=1000000000
lastsure=$((spinto - S))
awk -v a="$spinfrom" -v z="$lastsure" -v s=$S 'BEGIN { for (c = (int(a / s) + 1) * s; c <= z; c += s) print c }' >"$d/want.ticks"
[ -s "$d/want.ticks" ] || bad "no whole second within the spin (from $spinfrom to $spinto)"
missing=$(comm -23 "$d/want.ticks" "$d/s.ticks" | tr '\n' ' ')
[ -z "$missing" ] || bad "sampled: the thread is not on a CPU at the ticks $missing (it computed from $spinfrom to $spinto)"
extra=$(awk -v z="$lastsure" '$1 <= z' "$d/t.ticks" | comm -23 - "$d/s.ticks" | tr '\n' ' ')
[ -z "$extra" ] || bad "traced: the thread ran at the ticks $extra, which the sampled answer lacks"
# the traced Ticks are the ticks within the thread's RunningOn intervals
section "$d/traced/out.csv" Runs | awk -F, -v s=$S '{ for (c = int(($3 + s - 1) / s) * s; c < $4; c += s) print c }' | sort -n >"$d/r.ticks"
cmp -s "$d/r.ticks" "$d/t.ticks" || bad "traced: Ticks $(tr '\n' ' ' <"$d/t.ticks"), but the intervals of Runs hold $(tr '\n' ' ' <"$d/r.ticks")"
for m in sampled traced; do
  other=$(section "$d/$m/out.csv" Ticks | awk -F, -v t="$spinner" -v c="cpu$cpu" '$1 == t && $2 != c' | head -1)
  [ -z "$other" ] || bad "$m: the thread bound to cpu$cpu ran elsewhere: $other"
  mainRan=$(section "$d/$m/out.csv" Ticks | awk -F, -v t="$pinned" -v a="$spinfrom" -v z="$lastsure" '$1 == t && $3 > a && $3 <= z' | head -1)
  [ -z "$mainRan" ] || bad "$m: the main thread ran while it waited: $mainRan"
done
echo "ticks of the spinner: sampled $(wc -l <"$d/s.ticks" | tr -d ' '), traced $(wc -l <"$d/t.ticks" | tr -d ' ') (of $(section "$d/traced/out.csv" Runs | wc -l | tr -d ' ') intervals), within the spin $(wc -l <"$d/want.ticks" | tr -d ' ')"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
