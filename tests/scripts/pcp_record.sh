#!/bin/sh
# pcp_record.sh - a live run recorded as PCP archives (--pcp-record PREFIX,
# libpcp_import), one a host, for other PCP tools and for --pcp-archive.
# Two pmcd processes of the test's own (h1, h2); a live run answers
# tests/pcp/record.tq (two sleeps, the CPUs, and the life of a process
# that ends during the run) and records; then:
#   - pmdumplog reads each archive: its label names the host, and it
#     holds the metrics fetched and tqmon.entity.Proc;
#   - pmrep prints the recorded command of the sleep on h1;
#   - --pcp-archive over the two archives gives the live run's answers,
#     to the row and the time, the short process's end included (PCP's
#     instance domains only grow, so entity lifetimes are recorded as an
#     existence metric per instance domain: tqmon.entity.Proc has a value
#     for an instance at every tick it existed), and the counters' delta
#     relations (ProcRate of a process that works a little, HostRate of the
#     context switches) to the value: the recording holds the values the
#     run fetched, read back as they are, not interpolated.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_record
command -v pmdumplog >/dev/null && command -v pmrep >/dev/null || { echo "SKIP: no pmdumplog or pmrep"; exit 77; }
for n in h1 h2; do pcpStart $n || exit 1; done
H="127.0.0.1:$PORT_h1,127.0.0.1:$PORT_h2"
sleep 600 & p1=$!
sleep 600 & p2=$!
pids="$p1 $p2"
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid proc.psinfo.utime hinv.ncpu \
  kernel.all.pswitch 2>"$dir/describe.err" || bad "describe: $(cat "$dir/describe.err")"
# a process that works a little (its user CPU time, a counter, grows)
sh -c 'while :; do i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done; sleep 0.1; done' &
pw=$!
pids="$pids $pw"
# the short process: it ends after the run's second tick (the run's log says when)
sleep 3600 & ps=$!
pids="$pids $ps"
sed "s/P1/$(inst $p1)/g; s/P2/$(inst $p2)/g; s/PS/$(inst $ps)/g; s/PW/$(inst $pw)/g" tests/pcp/record.tq >"$dir/q.tq"
: >"$dir/live.err" # before the run: the wait below greps it at once
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots 6 --format csv --trace-level 2 --pcp-record "$dir/rec" \
  --stats "$dir/live.json" >"$dir/live.csv" 2>"$dir/live.err" &
run=$!
while [ "$(grep -c 'tick [0-9]*: 2 of 2 hosts up' "$dir/live.err")" -lt 2 ] && kill -0 $run 2>/dev/null; do sleep 0.1; done
kill $ps
wait $run || bad "live run: exit $? $(cat "$dir/live.err")"
cat "$dir/live.csv"
section() { awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$1"; }
life=$(section "$dir/live.csv" Life)
echo "$life" | grep -q "^h1:$(inst $ps),$(inst $ps) sleep,[0-9]*,[0-9]*$" ||
  bad "Life: the short process should have begun and ended in the live run: $life"

# ---------------------------------------------------------------- PCP's tools read the archives
for n in h1 h2; do
  pmdumplog -L "$dir/rec-$n" >"$dir/label-$n" 2>&1 || bad "pmdumplog cannot read rec-$n: $(cat "$dir/label-$n")"
  grep -q "Performance metrics from host $n" "$dir/label-$n" || bad "rec-$n: the label does not name $n"
  pmdumplog -d "$dir/rec-$n" >"$dir/desc-$n" 2>&1 || bad "pmdumplog -d rec-$n"
  for m in proc.psinfo.cmd proc.psinfo.ppid hinv.ncpu tqmon.entity.Proc; do
    grep -q "($m)" "$dir/desc-$n" || bad "rec-$n holds no metric $m"
  done
done
PATH=/usr/bin:/bin:$PATH pmrep -a "$dir/rec-h1" -z -o csv -i "$(inst $p1) .*" proc.psinfo.cmd >"$dir/pmrep.csv" 2>&1 || bad "pmrep: $(cat "$dir/pmrep.csv")"
cat "$dir/pmrep.csv"
grep -q ',"sleep"$' "$dir/pmrep.csv" || bad "pmrep does not print the sleep's command from rec-h1"

# ---------------------------------------------------------------- the replay gives the live answers
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp-archive "$dir/rec-h1,$dir/rec-h2" --format csv --stats "$dir/replay.json" \
  >"$dir/replay.csv" 2>"$dir/replay.err" || bad "replay: exit $? $(cat "$dir/replay.err")"
diff "$dir/live.csv" "$dir/replay.csv" >"$dir/diff" || bad "the replay differs from the live run: $(cat "$dir/diff")"
# (the counters moved: a delta of nothing but zeros would prove little)
[ "$(section "$dir/live.csv" Rate | awk -F, '$2 > 0' | wc -l)" -ge 1 ] || bad "Rate: the worker's CPU time never grew: $(section "$dir/live.csv" Rate)"
[ "$(section "$dir/live.csv" Switches | awk -F, '$2 > 0' | wc -l)" -ge 4 ] || bad "Switches: no context switches counted: $(section "$dir/live.csv" Switches)"
python3 - "$dir/live.json" <<'PY' || bad "the recording refused values (see above)"
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
for h in d["hosts"]:
    print(h["host"], "records", h["recorded"], "refused", h["record_refused"])
sys.exit(0 if all(h["record_refused"] == 0 and h["recorded"] == 6 for h in d["hosts"]) else 1)
PY
[ $fails -eq 0 ] || exit 1
echo "pcp_record: ok"
