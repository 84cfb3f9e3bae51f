#!/bin/sh
# kernel_sf.sh - rule SF in the kernel sensors (docs/enabling.md): a
# selection on Syscall's Call and one on Send's Bytes are checked by the BPF
# programs, which write only the packets that pass.  The caller makes N
# getppid calls among its others; the sender sends M messages of 100 bytes
# (none passes Bytes > 1000).  bpftrace counts the calls on the per-call
# tracepoints in the same run: tqmon's answer has its getppid calls, the
# kernel wrote exactly those and suppressed the caller's other calls; the
# sends are all suppressed.  The answer equals the previous optimizer's
# (--no-rule SF) on a second run.
set -u
. tests/kernel/lib.sh
kcheck
N=300
M=200
for mode in sf nosf; do
  d=$OUT/kernel_sf.$mode
  rm -rf "$d" && mkdir -p "$d"
  kpid="" kpids="" nk=0
  kstart "$d" syscalls $N || exit 1
  kstart "$d" sockets $M 100 || exit 1
  until="$caller+$sockets"
  sed -e "s/CALLER/$caller/g" -e "s/SENDER/$sockets/g" tests/kernel/sf.tq >"$d/q.tq"
  sed -e "s/CALLER/$caller/g" -e "s/SENDER/$sockets/g" tests/kernel/sf.bt >"$d/q.bt"
  koracle "$d" "$d/q.bt" || exit 1
  opt=""
  [ $mode = nosf ] && opt="--no-rule SF"
  # shellcheck disable=SC2086
  ktqmon "$d" "$d/q.tq" $opt || exit 1
  kgo "$d"
  same "$mode: getppid calls of the caller" "$(section "$d/out.csv" Ppid | wc -l | tr -d ' ')" "$(obs "$d" getppid)" $N
  [ "$(section "$d/out.csv" BigSends | wc -l | tr -d ' ')" = 0 ] || bad "$mode: sends of more than 1000 bytes"
  sys=$(grep '"relation": "Syscall"' "$d/stats.json")
  snd=$(grep '"relation": "Send"' "$d/stats.json")
  written=$(echo "$sys" | sed 's/.*"written": \([0-9]*\).*/\1/')
  if [ $mode = sf ]; then
    sup=$(echo "$sys" | sed 's/.*"suppressed": \([0-9]*\).*/\1/')
    # the caller's calls, begun: getppid written (a begin and an end each),
    # the others suppressed (a call begun before the sensor was enabled is
    # neither)
    [ "$written" = $((2 * N)) ] || bad "sf: the kernel wrote $written Syscall packets, the caller made $N getppid calls"
    calls=$(obs "$d" calls)
    [ "$sup" -gt 0 ] && [ "$sup" -le $((calls - N)) ] || bad "sf: $sup calls suppressed, the caller made $((calls - N)) others"
    ssup=$(echo "$snd" | sed 's/.*"suppressed": \([0-9]*\).*/\1/')
    [ "$ssup" = $M ] || bad "sf: $ssup sends suppressed, the sender sent $M"
    grep -qF '"filter": "S.Call=\"getppid\""' "$d/stats.json" || bad "sf: --stats shows no filter on Syscall"
    echo "sf: Syscall written $written, suppressed $sup; Send suppressed $ssup"
  else
    [ "$written" -gt $((2 * N)) ] || bad "nosf: the kernel wrote only $written Syscall packets"
    echo "nosf: Syscall written $written"
  fi
  section "$d/out.csv" Ppid | sort >"$d/ppid.rows"
done
exit $((fails > 0))
