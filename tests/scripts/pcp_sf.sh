#!/bin/sh
# pcp_sf.sh - rule SF's sampled form on a real pmcd (docs/enabling.md, SF;
# sensors/pcp.md, "Selections").  A selection on a PCP relation that reads
# a value as well as the instance (tests/pcp/sf.tq: process P1 if its
# command is sleep, or P2 if its parent is not 0) is no O2 case; SF puts
# the condition it implies on the instance (Proc = P1 or Proc = P2) into
# the alpha's argument, so the instance profile holds two processes.
# Checked:
#   - explain: the alpha's argument and SF's note (tests/pcp/sf.explain),
#     and for a selection on a value alone that it is checked in the
#     monitor (tests/pcp/sf_value.explain);
#   - the same answers with and without the rule (--no-rule SF), 2
#     processes at each of 3 ticks;
#   - what was fetched: the optimized run receives the values of 2
#     instances a fetch and counts the others as excluded, the run without
#     the rule receives every process's; against an independent count of
#     the processes pmcd serves (pminfo -f, during the runs);
#   - a range on the instance number (tests/pcp/sf_inst.tq, Inst < 30, a
#     join with the entity relation: rule SJS): the profile holds pminfo's
#     processes numbered below 30, the same answers as --no-rule SJS.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_sf
pcpStart h1 || exit 1
H=127.0.0.1:$PORT_h1
sleep 600 & p1=$!
sleep 600 & p2=$!
pids="$p1 $p2"
n=$(ls -d /proc/[0-9]* | wc -l)
while [ "$n" -lt 110 ]; do
  sleep 600 &
  pids="$pids $!"
  n=$((n + 1))
done
$T pcp describe -h "$H" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid 2>"$dir/describe.err" ||
  bad "describe: $(cat "$dir/describe.err")"
sed "s/P1/$(inst $p1)/g; s/P2/$(inst $p2)/g; s/CMD/sleep/" tests/pcp/sf.tq >"$dir/q.tq"
# ---------------------------------------------------------------- explain
norm() { sed "s/$H/HOST/g; s/$(inst $p1)/P1/g; s/$(inst $p2)/P2/g"; }
for q in sf sf_value; do
  qf="$dir/q.tq"
  [ $q = sf_value ] && qf=tests/pcp/sf_value.tq
  $T explain "$dir/pcp.tq" "$qf" --pcp "$H" 2>&1 | norm >"$dir/$q.explain"
  diff -u "tests/pcp/$q.explain" "$dir/$q.explain" >"$dir/$q.diff" || bad "explain $q: $(cat "$dir/$q.diff")"
done
$T explain --trace "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" | grep -q '^SF: ' || bad "explain --trace: SF did not fire"
$T explain --no-rule SF "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" | grep -q 'alpha^{S:P}_S(pi\[Proc\](Proc), Clock)' ||
  bad "explain --no-rule SF: the argument is not every process"
# ---------------------------------------------------------------- runs
count() { pminfo -h "$H" -f proc.psinfo.cmd 2>/dev/null | grep -c 'inst \['; }
seen=""
for mode in sf prev; do
  flag=""
  [ $mode = prev ] && flag="--no-rule SF"
  seen="$seen $(count)"
  # shellcheck disable=SC2086
  $T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots 3 --format csv $flag \
    --stats "$dir/$mode.json" >"$dir/$mode.csv" 2>"$dir/$mode.err" || bad "$mode run: exit $? $(cat "$dir/$mode.err")"
  seen="$seen $(count)"
done
echo "processes pmcd served (pminfo -f, before and after each run):$seen"
# shellcheck disable=SC2086 # (seen: the counts, one word each)
python3 - "$dir/sf.json" "$dir/prev.json" $seen <<'PY' || bad "the profile did not hold the two processes only"
import json, sys
def rel(f):
    d = [p for p in json.load(open(f))["pms"] if p["name"] == "pcp"][0]["detail"]
    h = d["hosts"][0]
    return h["relations"]["ProcSample"], h["bytes_received"], d["ticks"]
o, ob, ot = rel(sys.argv[1])
n, nb, nt = rel(sys.argv[2])
seen = [int(x) for x in sys.argv[3:]]
print("SF:          %d values of ProcSample, last fetch %d instances, %d instances excluded, %d bytes received"
      % (o["values"], o["instances_last_fetch"], o["excluded"], ob))
print("--no-rule SF: %d values of ProcSample, last fetch %d instances, %d instances excluded, %d bytes received"
      % (n["values"], n["instances_last_fetch"], n["excluded"], nb))
ok = True
def check(c, what):
    global ok
    if not c:
        print("not so:", what)
        ok = False
check(o["instances_last_fetch"] == 2, "the optimized profile is the two processes")
check(o["values"] == 2 * 2 * ot, "2 metrics of 2 processes at each of %d ticks" % ot)
check(n["instances_last_fetch"] >= 100, "without the rule, every process is fetched")
check(n["values"] >= 10 * o["values"], "tenfold fewer values")
# the independent count: every process pmcd served but the two was left out
# at each fetch (the machine is shared: processes come and go between the
# counts, by tens when other tests run beside this one)
per = o["excluded"] / max(ot, 1)
check(0.7 * min(seen) - 2 <= per <= 1.3 * max(seen), "excluded %.0f a tick against %s processes" % (per, seen))
check(n["excluded"] * 10 < o["excluded"], "without the rule, hardly any excluded")
check(0 < ob < nb, "fewer bytes received")
sys.exit(0 if ok else 1)
PY
strip() { sed 's/,[0-9]*$//' "$1" | sort; }
# ---------------------------------------------------------------- a range on the instance number (SJS)
# tests/pcp/sf_inst.tq: the processes numbered below 30, with and without
# SJS; the independent count: pminfo's instances numbered below 30
low=$(pminfo -h "$H" -f proc.psinfo.cmd 2>/dev/null | sed -n 's/^ *inst \[\([0-9]*\) or.*/\1/p' | awk '$1 < 30' | wc -l)
for mode in sjs prev; do
  flag=""
  [ $mode = prev ] && flag="--no-rule SJS"
  # shellcheck disable=SC2086
  $T run "$dir/pcp.tq" tests/pcp/sf_inst.tq --pcp "$H" --snapshots 2 --format csv $flag \
    --stats "$dir/inst$mode.json" >"$dir/inst$mode.csv" 2>"$dir/inst$mode.err" || bad "inst $mode run: exit $? $(cat "$dir/inst$mode.err")"
done
python3 - "$dir/instsjs.json" "$dir/instprev.json" "$low" <<'PY' || bad "the range on the instance number did not make the profile"
import json, sys
def rel(f):
    d = [p for p in json.load(open(f))["pms"] if p["name"] == "pcp"][0]["detail"]
    return d["hosts"][0]["relations"]["ProcSample"]
o, n, low = rel(sys.argv[1]), rel(sys.argv[2]), int(sys.argv[3])
print("Inst < 30: SJS %d instances a fetch (%d values), --no-rule SJS %d (%d values); pminfo: %d numbered below 30"
      % (o["instances_last_fetch"], o["values"], n["instances_last_fetch"], n["values"], low))
sys.exit(0 if abs(o["instances_last_fetch"] - low) <= 3 and n["instances_last_fetch"] >= 100 and o["values"] < n["values"] else 1)
PY
# the processes, not their commands: a kernel worker's command names the
# work queue it serves at the moment (kworker/0:0-events, then
# kworker/0:0-mm_percpu_wq), so it may change between the two runs
procs() { sed 's/,.*//' "$1" | sort; }
[ "$(procs "$dir/instsjs.csv")" = "$(procs "$dir/instprev.csv")" ] || bad "--no-rule SJS answers differ: $(diff "$dir/instsjs.csv" "$dir/instprev.csv" | head)"
[ "$low" -eq 0 ] || grep -q '^h1:0000' "$dir/instsjs.csv" || bad "no process below 30 in the answer: $(head "$dir/instsjs.csv")"
[ "$(strip "$dir/sf.csv")" = "$(strip "$dir/prev.csv")" ] || bad "--no-rule SF answers differ: $(diff "$dir/sf.csv" "$dir/prev.csv" | head)"
[ "$(grep -c ',sleep,' "$dir/sf.csv")" -eq 6 ] || bad "not 2 processes at 3 ticks: $(cat "$dir/sf.csv")"
[ $fails -eq 0 ] || exit 1
echo "pcp_sf: ok"
