#!/bin/sh
# pcp.sh - the PCP section of make bench (bench/run.sh runs it): 16 pmcd
# processes on this machine (tests/pcp/lib.sh: loopback ports, host names
# b01..b16), and one query about one process on one host (a sleep this
# script starts, on b01), run for TICKS ticks of 1 s optimized (the
# instance profile holds that one process, the other hosts are not asked
# for processes) and unoptimized (--no-opt: every process of every host).
# Prints KEY VALUE lines: the monitor's CPU (build/measure: user + system)
# and wall time, and from the pcp PM's detail in --stats the values
# received (counted from the results) and the bytes received from the 16
# pmcds (the kernel's count on each context's socket, TCP_INFO).
# Exit 77 when PCP is not installed.
set -u
TQ=${TQ:-build/tqmon}
MEASURE=${MEASURE:-build/measure}
OUT=${OUT:-build/bench}
TICKS=${TICKS:-10}
NH=16
. tests/pcp/lib.sh
trap 'kill $proc 2>/dev/null; pcpStopAll' EXIT
proc=""
pcpSetup
hosts=""
for i in $(seq 1 $NH); do
  n=$(printf 'b%02d' "$i")
  pcpStart "$n" >&2 || exit 1
  hosts="$hosts${hosts:+,}127.0.0.1:$(eval echo "\$PORT_$n")"
done
sleep 3600 &
proc=$!
d=$OUT/pcp
mkdir -p "$d"
$TQ pcp describe -h "127.0.0.1:$PORT_b01" -o "$d/pcp.tq" proc.psinfo.cmd proc.psinfo.utime proc.psinfo.stime >&2 || exit 1
cat >"$d/q.tq" <<Q
-- bench/pcp.sh: one process on one host of $NH, its CPU time over each tick
range of R is ProcRate
retrieve (R.Proc, R.PsinfoCmd, R.PsinfoUtime, R.PsinfoStime) where R.Proc = "b01:$(inst $proc)"
Q
echo "hosts $NH"
echo "ticks $TICKS"
echo "processes $(ls -d /proc/[0-9]* | wc -l)"
for mode in opt noopt; do
  flag=""
  [ $mode = noopt ] && flag=--no-opt
  $MEASURE $TQ run "$d/pcp.tq" "$d/q.tq" --pcp "$hosts" --snapshots "$TICKS" --format csv $flag \
    --stats "$d/$mode.json" >"$d/$mode.csv" 2>"$d/$mode.err"
  set -- $(tail -n 1 "$d/$mode.err")
  echo "$mode.wall ${1:-0}"
  echo "$mode.exit ${3:-1}"
  echo "$mode.cpu ${4:-0}"
  echo "$mode.rows $(grep -c ',sleep,' "$d/$mode.csv")"
  sed 's/,[0-9]*$//' "$d/$mode.csv" | sort >"$d/$mode.rows"
  python3 - "$d/$mode.json" "$mode" <<'PY'
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
m = sys.argv[2]
print("%s.values %d" % (m, d["values"]))
print("%s.bytes %d" % (m, sum(h.get("bytes_received", 0) for h in d["hosts"])))
print("%s.late %d" % (m, d["late"]))
print("%s.up %d" % (m, sum(1 for h in d["hosts"] if h["state"] == "up")))
PY
done
cmp -s "$d/opt.rows" "$d/noopt.rows" && echo "same yes" || echo "same NO"
