#!/bin/sh
# pcp_profile.sh - enabling is the instance profile: a query about three
# processes of a host with 100 or more fetches only their values.  The
# test starts a pmcd of its own and enough sleep processes for the host to
# have 110; the query (tests/pcp/profile.tq) runs optimized and unoptimized
# (--no-opt enables every process) for 3 ticks.  The values received are
# counted from the results (the detail of --stats): the optimized run must
# receive at least 10 times fewer, with the same answers.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_profile
pcpStart h1 || exit 1
sleep 600 & p1=$!
sleep 600 & p2=$!
sleep 600 & p3=$!
pids="$p1 $p2 $p3"
n=$(ls -d /proc/[0-9]* | wc -l)
while [ "$n" -lt 110 ]; do
  sleep 600 &
  pids="$pids $!"
  n=$((n + 1))
done
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid 2>"$dir/describe.err" ||
  bad "describe: $(cat "$dir/describe.err")"
sed "s/P1/$(inst $p1)/g; s/P2/$(inst $p2)/g; s/P3/$(inst $p3)/g" tests/pcp/profile.tq >"$dir/q.tq"
for mode in opt noopt; do
  flag=""
  [ $mode = noopt ] && flag=--no-opt
  $T run "$dir/pcp.tq" "$dir/q.tq" --pcp "127.0.0.1:$PORT_h1" --snapshots 3 --format csv $flag \
    --stats "$dir/$mode.json" >"$dir/$mode.csv" 2>"$dir/$mode.err" || bad "$mode run: exit $? $(cat "$dir/$mode.err")"
done
python3 - "$dir/opt.json" "$dir/noopt.json" <<'PY' || bad "the profile did not cut the values tenfold"
import json, sys
def rel(f):
    d = [p for p in json.load(open(f))["pms"] if p["name"] == "pcp"][0]["detail"]
    return d["hosts"][0]["relations"]["ProcSample"], d["values"]
o, ov = rel(sys.argv[1])
n, nv = rel(sys.argv[2])
print("optimized:   %d values of ProcSample (%d in all), last fetch %d instances" % (o["values"], ov, o["instances_last_fetch"]))
print("unoptimized: %d values of ProcSample (%d in all), last fetch %d instances" % (n["values"], nv, n["instances_last_fetch"]))
def nbytes(f):
    d = [p for p in json.load(open(f))["pms"] if p["name"] == "pcp"][0]["detail"]
    return d["hosts"][0]["bytes_received"]
ob, nb = nbytes(sys.argv[1]), nbytes(sys.argv[2])
print("ratio: %.1f; bytes received (the kernel's count on the socket): %d against %d" % (n["values"] / max(o["values"], 1), ob, nb))
sys.exit(0 if o["values"] > 0 and n["values"] >= 10 * o["values"] and o["instances_last_fetch"] == 3
         and n["instances_last_fetch"] >= 100 and 0 < ob < nb else 1)
PY
strip() { sed 's/,[0-9]*$//' "$1" | sort; }
[ "$(strip "$dir/opt.csv")" = "$(strip "$dir/noopt.csv")" ] || bad "--no-opt answers differ"
[ "$(grep -c ',sleep,' "$dir/opt.csv")" -eq 9 ] || bad "not 3 processes at 3 ticks"
[ $fails -eq 0 ] || exit 1
echo "pcp_profile: ok"
