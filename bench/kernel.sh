#!/bin/sh
# kernel.sh - the kernel sensors' section of make bench (bench/run.sh runs
# it; `make bench-kernel` runs it alone).  A workload's own rate
# (build/kload: rw = write 64 bytes to a pipe and read them back, getppid =
# a tight getppid loop, pingpong = two processes over pipes) in five modes,
# the rounds interleaved so that the machine's other load falls on all of
# them alike:
#   none      alone
#   bpftrace  bpftrace counting its events with a pid filter (bench/kernel/*.bt)
#   tqmon     tqmon --kernel answering a query about its pid (bench/kernel/*.tq)
#   other     tqmon answering the query about another (sleeping) process:
#             the workload's events are seen by the programs, never written
#   btother   bpftrace filtering for that other process
# Writes the section's report to OUT/kernel.report and its targets (MET or
# MISSED) to OUT/kernel.targets, and prints both.  KEY VALUE lines with every
# rate go to OUT/kernel.txt.  Knobs: TQ (build/tqmon), OUT (build/bench),
# TQ_BENCH_KSECS (2 s a run), TQ_BENCH_KROUNDS (5).  Nothing here fails
# because the machine is slow: it measures and reports.
B=build
TQ=${TQ:-$B/tqmon}
OUT=${OUT:-$B/bench}
KL=$B/kload
KSECS=${TQ_BENCH_KSECS:-2}
KROUNDS=${TQ_BENCH_KROUNDS:-5}
LC_ALL=C
export LC_ALL
mkdir -p $OUT
REP=$OUT/kernel.report
TGT=$OUT/kernel.targets
KV=$OUT/kernel.txt
: > $REP
: > $TGT
: > $KV
rep() { printf '%s\n' "$*" >> $REP; }
row() { printf '  %-22s %-26s %-34s %s\n' "$1" "$2" "$3" "$4" >> $REP; }
met() { if [ "$1" = 1 ]; then printf 'MET   '; else printf 'MISSED'; fi; }
target() { printf '  [%s] %s\n' "$(met $1)" "$2" >> $TGT; }
big() { awk -v n="$1" 'BEGIN { if (n >= 1e6) printf "%.2f M", n / 1e6; else if (n >= 1e3) printf "%.1f k", n / 1e3; else printf "%d", n }'; }
# slow A B: B's slowdown against A, in percent (positive: slower)
slow() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.1f", 100 * (a - b) / a; else printf "n/a" }'; }
# chg A B: B against A, signed percent ("-30.1%": 30.1% slower)
chg() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%+.1f%%", 100 * (b - a) / a; else printf "n/a" }'; }
# kwait FILE PATTERN: waits (120 s at most) until FILE holds PATTERN
kwait() {
  _i=0
  while ! grep -qE "$2" "$1" 2> /dev/null; do
    _i=$((_i + 1))
    [ $_i -gt 2400 ] && return 1
    sleep 0.05
  done
}
# kround WORKLOAD MODE: one run of build/kload WORKLOAD for KSECS seconds;
# its rate (of wall time) appended to OUT/k-WORKLOAD-MODE.rates, its rate of
# its own CPU time to .cpurates.
kround() {
  kw=$1 km=$2
  kd=$OUT/k-$kw-$km
  rm -rf $kd
  mkdir -p $kd
  $KL -o $kd/ids -g $kd/go -t $KSECS $kw > $kd/ops 2> $kd/err &
  kl=$!
  kwait $kd/ids . || { kill $kl; return; }
  eval "$(cat $kd/ids)"
  kq=syscall
  [ $kw = pingpong ] && kq=sched
  kmon="" ksl=""
  target_pid=$pid
  if [ $km = other ] || [ $km = btother ]; then
    sleep 600 &
    ksl=$!
    target_pid=$ksl
  fi
  case $km in
    bpftrace | btother)
      sed -e "s/PID/$target_pid/g" -e "s/args->pid == $target_pid\/ { exit(); }/args->pid == $pid\/ { exit(); }/" \
        bench/kernel/$kq.bt > $kd/q.bt
      bpftrace $kd/q.bt > $kd/bt.out 2> $kd/bt.err &
      kmon=$!
      kwait $kd/bt.out '^ready' || echo "bpftrace did not start: $(cat $kd/bt.err)" >> $kd/err
      ;;
    tqmon | other)
      sed "s/PID/$target_pid/g" bench/kernel/$kq.tq > $kd/q.tq
      $TQ run sensors/kernel.tq $kd/q.tq --pm clock=realtime --pm kernel=until=$pid --quiet --trace-level 2 \
        --stats $kd/stats.json > $kd/tq.out 2> $kd/tq.err &
      kmon=$!
      kwait $kd/tq.err 'tracing since|error' || true
      ;;
  esac
  touch $kd/go
  wait $kl
  [ -n "$kmon" ] && wait $kmon
  [ -n "$ksl" ] && { kill $ksl; wait $ksl 2> /dev/null; }
  sed -n 's/^ops_per_s //p' $kd/ops >> $OUT/k-$kw-$km.rates
  sed -n 's/^ops_per_cpu_s //p' $kd/ops >> $OUT/k-$kw-$km.cpurates
  [ -f $kd/stats.json ] && cp $kd/stats.json $OUT/k-$kw-$km.stats.json
  [ -f $kd/bt.out ] && cp $kd/bt.out $OUT/k-$kw-$km.bt.out
}
# kstat FILE WHAT: median, min or max of the numbers in FILE
kstat() {
  sort -g "$1" 2> /dev/null | awk -v w="$2" '{ v[NR] = $1 } END {
    if (!NR) print 0; else if (w == "min") print v[1]; else if (w == "max") print v[NR]; else print v[int((NR + 1) / 2)] }'
}
kmsg() { grep "{\"name\": \"$2\", \"calls\"" "$1" 2> /dev/null | sed 's/.*"message": "\([^"]*\)".*/\1/'; }
kfield() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

if [ ! -r /sys/kernel/btf/vmlinux ] || [ "$(id -u)" != 0 ] || ! command -v bpftrace > /dev/null 2>&1; then
  rep "8. KERNEL SENSORS: not measured: needs root, BTF and bpftrace (sh tests/deps.sh bench)"
  target 0 "kernel sensors: not measured: needs root, BTF and bpftrace (sh tests/deps.sh bench)"
  cat $REP $TGT
  exit 0
fi
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
ulimit -l unlimited 2> /dev/null || true
# (TQ_BENCH_KROUNDS=0: the report of the rates already in OUT)
[ "$KROUNDS" -gt 0 ] && rm -f $OUT/k-*.rates $OUT/k-*.cpurates
r=0
while [ $r -lt $KROUNDS ]; do
  r=$((r + 1))
  echo "  round $r of $KROUNDS: rw, getppid, pingpong; alone, bpftrace, tqmon, tqmon and bpftrace on another process" >&2
  for kw in rw getppid pingpong; do
    for km in none bpftrace tqmon other btother; do
      [ $kw = pingpong ] && { [ $km = other ] || [ $km = btother ]; } && continue
      kround $kw $km
    done
  done
done
for kw in rw getppid pingpong; do
  for km in none bpftrace tqmon other btother; do
    [ -f $OUT/k-$kw-$km.rates ] || continue
    for w in median min max; do
      eval "k_${kw}_${km}_$w=\$(kstat $OUT/k-$kw-$km.rates $w)"
      eval "c_${kw}_${km}_$w=\$(kstat $OUT/k-$kw-$km.cpurates $w)"
    done
    echo "$kw.$km.rates $(tr '\n' ' ' < $OUT/k-$kw-$km.rates)" >> $KV
    echo "$kw.$km.cpurates $(tr '\n' ' ' < $OUT/k-$kw-$km.cpurates)" >> $KV
  done
done

# cell WORKLOAD MODE: "median (min..max) slowdown%" of the rates of wall time
cell() {
  eval "a=\$k_${1}_none_median m=\$k_${1}_${2}_median lo=\$k_${1}_${2}_min hi=\$k_${1}_${2}_max"
  if [ "$2" = none ]; then
    printf '%s (%s..%s)' "$(big $m)" "$(big $lo)" "$(big $hi)"
  else
    printf '%s (%s..%s) %s' "$(big $m)" "$(big $lo)" "$(big $hi)" "$(chg $a $m)"
  fi
}
# ccell WORKLOAD MODE: the same of the rates of the workload's CPU time
ccell() {
  eval "a=\$c_${1}_none_median m=\$c_${1}_${2}_median"
  if [ "$2" = none ]; then big $m; else printf '%s %s' "$(big $m)" "$(chg $a $m)"; fi
}
rep "8. KERNEL SENSORS (bench/kernel.sh: build/kload, ${KSECS} s a run, $KROUNDS rounds, the modes interleaved; the workload's"
rep "   operations per second of wall time: median (min..max) of the rounds, and the median's slowdown against alone's)"
row "" "alone" "bpftrace, pid filter" "tqmon --kernel, query on the pid"
for kw in rw getppid pingpong; do
  row "$kw" "$(cell $kw none)" "$(cell $kw bpftrace)" "$(cell $kw tqmon)"
done
for kw in rw getppid; do
  row "$kw, not enabled" "" "$(cell $kw btother)" "$(cell $kw other)"
done
rep "   the same, operations per second of the workload's own CPU time (what the monitor costs the workload itself, without"
rep "   the waits for a CPU that the machine's other load and the monitor's own thread add to the rates above; median):"
for kw in rw getppid pingpong; do
  row "$kw" "$(ccell $kw none)" "$(ccell $kw bpftrace)" "$(ccell $kw tqmon)"
done
for kw in rw getppid; do
  row "$kw, not enabled" "" "$(ccell $kw btother)" "$(ccell $kw other)"
done
rep "   (rw: 2 system calls an operation; getppid: 1; pingpong: 2 switches and 2 wakeups.  bpftrace counts in the kernel and"
rep "    ships nothing; tqmon writes each system call of the enabled threads to its ring buffer as one packet (entry and"
rep "    return) and answers the query from them, on the same 2 cores.  Not enabled: the query, or bpftrace's filter, names"
rep "    another process.  With hook=tracepoint (kernel_syscall's message below) the raw_syscalls tracepoints stay"
rep "    attached, so every system call of every process takes the kernel's traced path and runs two BPF programs: a"
rep "    floor bpftrace shares, about 40 ns a call where it was measured (22% of rw's CPU time, 37% of getppid's; sensors/kernel.md, \"What"
rep "    a system call costs\"), which no program on these tracepoints can go below; with hook=fentry (fentry and fexit on"
rep "    x64_sys_call, where the kernel allows them) a call runs the two programs and nothing else)"
for kw in rw getppid; do
  rep "   tqmon on $kw: kernel_syscall $(kmsg $OUT/k-$kw-tqmon.stats.json kernel_syscall)"
  rep "     kernel_thread $(kmsg $OUT/k-$kw-tqmon.stats.json kernel_thread | tr ' ' '\n' | grep -E '^(queue_lost|late)=' | tr '\n' ' ')"
  rep "   tqmon on $kw, another process enabled: kernel_syscall $(kmsg $OUT/k-$kw-other.stats.json kernel_syscall)"
done
rep "   tqmon on pingpong: kernel_runningon $(kmsg $OUT/k-pingpong-tqmon.stats.json kernel_runningon)"
rep "   bpftrace on rw: $(tr '\n' ' ' < $OUT/k-rw-bpftrace.bt.out 2> /dev/null)"
for kw in rw getppid; do
  ql=$(kfield "$(kmsg $OUT/k-$kw-tqmon.stats.json kernel_thread)" queue_lost)
  dr=$(kfield "$(kmsg $OUT/k-$kw-tqmon.stats.json kernel_syscall)" dropped)
  if [ "${ql:-0}" != 0 ] || [ "${dr:-0}" != 0 ]; then
    rep "   (the last tqmon run on $kw lost packets: ${dr:-0} dropped in the kernel's ring, ${ql:-0} the monitor could not hold: its"
    rep "    engine answers fewer system calls a second than the workload makes; the answer says it may be incomplete)"
  fi
done
# The targets are judged on the medians of both rates: of wall time (what
# the issue asks) and of the workload's CPU time (the same cost without the
# machine's other load, which on this shared machine moves the rates of
# wall time by 2x from one run to the next): MET when both meet it.
# targ WORKLOAD: tqmon's slowdown at most bpftrace's.
targ() {
  eval "a=\$k_${1}_none_median b=\$k_${1}_bpftrace_median t=\$k_${1}_tqmon_median"
  eval "ca=\$c_${1}_none_median cb=\$c_${1}_bpftrace_median ct=\$c_${1}_tqmon_median"
  ok=$(awk -v a="$a" -v b="$b" -v t="$t" -v cb="$cb" -v ct="$ct" 'BEGIN { print (a > 0 && t >= b && ct >= cb ? 1 : 0) }')
  ratio=$(awk -v a="$a" -v b="$b" -v t="$t" 'BEGIN { if (a > b && a > t && a > 0) printf "%.2fx", (a - t) / (a - b); else printf "n/a" }')
  target $ok "kernel, $2 ($1), enabled pid: tqmon's slowdown at most bpftrace's: $(slow $a $t)% against $(slow $a $b)% (ratio $ratio); of its CPU time $(slow $ca $ct)% against $(slow $ca $cb)%"
}
targ rw syscall-heavy
targ getppid "tight getppid"
targ pingpong context-switch-heavy
a=$k_rw_none_median o=$k_rw_other_median ca=$c_rw_none_median co=$c_rw_other_median
ok=$(awk -v a="$a" -v o="$o" -v ca="$ca" -v co="$co" 'BEGIN { print (a > 0 && ca > 0 && 100 * (a - o) / a <= 5 && 100 * (ca - co) / ca <= 5 ? 1 : 0) }')
target $ok "kernel, a process not enabled: at most 5% slower on small reads and writes: $(slow $a $o)%, of its CPU time $(slow $ca $co)% (bpftrace filtering for another pid: $(slow $a $k_rw_btother_median)%, $(slow $ca $c_rw_btother_median)%; a tight getppid loop: $(slow $k_getppid_none_median $k_getppid_other_median)%, $(slow $c_getppid_none_median $c_getppid_other_median)%, bpftrace $(slow $k_getppid_none_median $k_getppid_btother_median)%, $(slow $c_getppid_none_median $c_getppid_btother_median)%)"
cat $REP $TGT
