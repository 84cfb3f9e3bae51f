#!/bin/sh
# host_ps.sh - the host sensors against ps, and what they read.  A `sleep`
# started here is the one process a query asks about (tests/host/one.tq,
# every relation of sensors/host.tq, 4 ticks of 200 ms).  Its answers must
# be what ps says of the same pid (a sleeping process keeps its state, CPU,
# memory and I/O; ps is asked before and after the run and a value must be
# one of the two).  The read counters of the host PMs (--stats) must show
# one read per tick of that pid's file for each sampled relation, the
# discovery of processes one listing of /proc per tick and one stat read
# per new pid; when strace works here, the files the kernel saw opened must
# be exactly those.  Finally the run's recording (--record) replays to the
# same answers.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_ps
rm -rf "$dir" && mkdir -p "$dir"

sleep 600 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
waitcomm $pid sleep || { echo "FAIL: sleep $pid did not start"; exit 1; }
ps1=$(ps -o comm=,state=,psr=,rss=,vsz=,ppid=,nlwp= -p $pid)
sed "s/PID/$pid/g" tests/host/one.tq >"$dir/q.tq"
$T run --host sensors/host.tq "$dir/q.tq" --snapshots 4 --format csv --stats "$dir/stats.json" \
  --record "$dir/rec.col" >"$dir/out.csv" 2>"$dir/err" || bad "run: exit $? $(cat "$dir/err")"
ps2=$(ps -o comm=,state=,psr=,rss=,vsz=,ppid=,nlwp= -p $pid)
io=$(grep -E '^(read|write)_bytes' /proc/$pid/io | awk '{print $2}' | tr '\n' ' ')
echo "ps before: $ps1"
echo "ps after:  $ps2"
echo "io: $io"
cat "$dir/out.csv"

# ---------------------------------------------------------------- answers against ps
set -- $ps2
comm=$1 state=$(statename "$2") psr=$3 ppid=$6 nlwp=$7
rss1=$(echo "$ps1" | awk '{print $4 * 1024}') rss2=$(($4 * 1024))
vsz1=$(echo "$ps1" | awk '{print $5 * 1024}') vsz2=$(($5 * 1024))
[ "$(section "$dir/out.csv" St | wc -l)" -eq 4 ] || bad "ProcessState: not 4 samples"
section "$dir/out.csv" St | while IFS=, read -r p st c pp th at; do
  [ "$p,$st,$c,$pp,$th" = "$pid,$state,$comm,$ppid,$nlwp" ] ||
    echo "FAIL: ProcessState at $at: $p,$st,$c,$pp,$th; ps says $pid,$state,$comm,$ppid,$nlwp"
done >>"$dir/fails"
[ "$(section "$dir/out.csv" Ro | wc -l)" -eq 4 ] || bad "LastProcessor: not 4 samples"
section "$dir/out.csv" Ro | while IFS=, read -r p cpu at; do
  [ "$p,$cpu" = "$pid,cpu$psr" ] || echo "FAIL: LastProcessor at $at: $p,$cpu; ps says psr $psr"
done >>"$dir/fails"
[ "$(section "$dir/out.csv" Mem | wc -l)" -eq 4 ] || bad "Memory: not 4 samples"
section "$dir/out.csv" Mem | while IFS=, read -r p rss vsz at; do
  { [ "$rss" = "$rss1" ] || [ "$rss" = "$rss2" ]; } || echo "FAIL: Memory at $at: Rss $rss; ps says $rss1 then $rss2"
  { [ "$vsz" = "$vsz1" ] || [ "$vsz" = "$vsz2" ]; } || echo "FAIL: Memory at $at: Vsize $vsz; ps says $vsz1 then $vsz2"
done >>"$dir/fails"
[ "$(section "$dir/out.csv" Cpu | wc -l)" -eq 4 ] || bad "CpuTime: not 4 samples"
section "$dir/out.csv" Cpu | while IFS=, read -r p ns u s at; do
  # a sleeping sleep has used well under a second (ps shows 00:00:00)
  { [ "$ns" -eq $((u + s)) ] && [ "$ns" -ge 0 ] && [ "$ns" -lt 1000000000 ]; } || echo "FAIL: CpuTime at $at: $ns = $u + $s"
done >>"$dir/fails"
[ "$(section "$dir/out.csv" Use | wc -l)" -eq 3 ] || bad "CpuUse: not 3 deltas (4 samples)"
[ "$(section "$dir/out.csv" Bytes | wc -l)" -eq 4 ] || bad "Io: not 4 samples"
section "$dir/out.csv" Bytes | while IFS=, read -r p r w at; do
  [ "$r $w " = "$io" ] || echo "FAIL: Io at $at: $r $w; /proc/$pid/io says $io"
done >>"$dir/fails"
# it existed before the run: its interval begins at the first snapshot, the first sample
first=$(section "$dir/out.csv" St | head -1 | cut -d, -f6)
[ "$(section "$dir/out.csv" Pr)" = "$pid,$pid,$comm,$first," ] || bad "Process: $(section "$dir/out.csv" Pr)"
[ "$(section "$dir/out.csv" Cpus | wc -l)" -eq "$(ncpus)" ] || bad "Processor: not the $(ncpus) CPUs of /proc/stat"
if [ -s "$dir/fails" ]; then
  cat "$dir/fails"
  fails=$((fails + $(wc -l <"$dir/fails")))
fi

# ---------------------------------------------------------------- what was read
for pm in host_processstate host_lastprocessor host_cputime host_memory host_io; do
  m=$(pmmsg "$dir/stats.json" $pm)
  echo "$pm: $m"
  [ "$m" = "reads=4 failed=0 pids=1 [$pid]" ] || bad "$pm read other files than one of pid $pid per tick: $m"
done
m=$(pmmsg "$dir/stats.json" host_process)
echo "host_process: $m"
[ "$(field "$m" listings)" -eq 4 ] || bad "host_process: not one listing of /proc per tick"
[ "$(field "$m" reads)" -eq $(($(field "$m" begun) + $(field "$m" failed))) ] ||
  bad "host_process: reads are not one per new pid"
m=$(pmmsg "$dir/stats.json" host_processor)
echo "host_processor: $m"
[ "$m" = "reads=1 cpus=$(ncpus)" ] || bad "host_processor: $m"

# the kernel's view: every /proc/N file opened, by strace (when it works here)
if command -v strace >/dev/null 2>&1 && strace -f -qq -e trace=openat -o "$dir/probe" true 2>/dev/null; then
  ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat -o "$dir/strace" \
    $T run --host sensors/host.tq "$dir/q.tq" --snapshots 4 --quiet --stats "$dir/stats2.json" 2>>"$dir/err" ||
    bad "run under strace: exit $?"
  # (tqmon's own stat is among them: it is a process of this host too)
  grep -o '"/proc/[0-9]*/[a-z_]*"' "$dir/strace" | tr -d '"' | sort | uniq -c >"$dir/opened"
  listings=$(grep -c '"/proc", O_RDONLY.*O_DIRECTORY' "$dir/strace")
  mine=$(grep " /proc/$pid/" "$dir/opened" | awk '{print $1, $2}' | tr '\n' ' ')
  others=$(grep -v " /proc/$pid/" "$dir/opened")
  n=0
  for pm in host_process host_processstate host_lastprocessor host_cputime host_memory host_io; do
    n=$((n + $(field "$(pmmsg "$dir/stats2.json" $pm)" reads)))
  done
  total=$(awk '{ s += $1 } END { print s + 0 }' "$dir/opened")
  echo "strace: files of $pid opened: $mine"
  echo "strace: $(echo "$others" | grep -c .) other /proc/PID files opened; $total opens in all, the counters say $n"
  echo "strace: $listings listings of /proc"
  [ "$listings" -eq 4 ] || bad "strace: $listings listings of /proc in 4 ticks"
  [ "$mine" = "4 /proc/$pid/io 13 /proc/$pid/stat 4 /proc/$pid/statm " ] ||
    bad "strace: the files of $pid were not opened once per tick and relation (+1 stat to discover it): $mine"
  echo "$others" | awk 'NF && ($1 != 1 || $2 !~ /\/stat$/)' | grep . && bad "strace: another process's file opened twice, or not its stat"
  [ "$total" -eq "$n" ] || bad "strace: $total opens of /proc/PID files, the read counters say $n"
else
  echo "strace does not work here: the kernel's view of the reads is not checked"
fi

# ---------------------------------------------------------------- the recording replays
$T run sensors/host.tq "$dir/q.tq" --replay "$dir/rec.col" --format csv >"$dir/replay.csv" 2>>"$dir/err" ||
  bad "replay: exit $?"
cmp -s "$dir/out.csv" "$dir/replay.csv" || bad "the replay of the run's recording gives other answers: $(diff "$dir/out.csv" "$dir/replay.csv")"

grep -q "Sanitizer\|runtime error" "$dir/err" && bad "sanitizer: $(cat "$dir/err")"
[ $fails -eq 0 ] || exit 1
echo ok
