#!/bin/sh
# pcp_hosts.sh - PCP metrics of three hosts as relations (sensors/pcp.md).
# The test starts three pmcd processes of its own (tests/pcp/lib.sh: free
# loopback ports, host names h1, h2, h3) and three sleep processes, then:
#   - `tqmon pcp describe` writes the configuration, which compiles;
#   - `tqmon explain --pcp` shows each alpha (the instances it names) and
#     under it the metrics fetched and the profile it sets;
#   - a run over the three hosts answers tests/pcp/hosts.tq: each process's
#     command and parent are what pminfo reads from the same pmcd, the
#     cross-host join pairs h1's and h2's sleeps with each host's pmcd.pid,
#     every host gives its CPUs and pmcd.pid: the pmcds share one /proc,
#     so pmcd.pid is what shows each fetch went to its own host (checked
#     against pminfo -h on each);
#   - the profile: each host fetched only the processes the queries name
#     (instances_last_fetch in the detail of --stats: 2 on h1, 1 elsewhere),
#     a delta relation's entities included;
#   - the same queries unoptimized (--no-opt) give the same answers;
#   - killing h3's pmcd mid-run ends h3's entities with a message while h1
#     and h2 go on, complete and never late; started again, h3 is
#     reconnected and its entities begin again: in the store, h3's process
#     and its Host entity end at the loss's time and begin again after it
#     is back (tests/pcp/hosts_lives.tq).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_hosts
for n in h1 h2 h3; do pcpStart $n || exit 1; done
H="127.0.0.1:$PORT_h1,127.0.0.1:$PORT_h2,127.0.0.1:$PORT_h3"
sleep 600 & p1=$!
sleep 600 & p2=$!
sleep 600 & p3=$!
sleep 600 & p4=$!
pids="$p1 $p2 $p3 $p4"

# ---------------------------------------------------------------- describe
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid proc.psinfo.utime \
  hinv.ncpu kernel.all.load pmcd.pid 2>"$dir/describe.err" || bad "describe: $(cat "$dir/describe.err")"
grep -q '^-- pcp: entity Proc 3.9$' "$dir/pcp.tq" || bad "describe: no Proc entity line"
grep -q '^-- pcp: metric ProcSample.PsinfoUtime proc.psinfo.utime 3.9 u64 counter$' "$dir/pcp.tq" ||
  bad "describe: no utime line"
grep -q 'delta ProcRate;' "$dir/pcp.tq" || bad "describe: the counter gave no delta relation"
sed "s/P1/$(inst $p1)/g; s/P2/$(inst $p2)/g; s/P3/$(inst $p3)/g; s/P4/$(inst $p4)/g" tests/pcp/hosts.tq >"$dir/q.tq"
sed "s/P1/$(inst $p1)/g; s/P2/$(inst $p2)/g; s/P3/$(inst $p3)/g" tests/pcp/hosts_lives.tq >"$dir/lives.tq"
# each pmcd's own process id, as pminfo reads it from that pmcd
for k in 1 2 3; do
  v=$(pminfo -h "127.0.0.1:$(eval echo "\$PORT_h$k")" -f pmcd.pid | sed -n 's/^ *value //p')
  [ -n "$v" ] || bad "pminfo gives no pmcd.pid on h$k"
  eval "pmcdpid$k=\$v"
done
[ "$pmcdpid1" != "$pmcdpid2" ] && [ "$pmcdpid2" != "$pmcdpid3" ] || bad "the pmcds' pmcd.pid do not differ"

$T check "$dir/pcp.tq" "$dir/q.tq" >"$dir/check.out" 2>&1 || bad "check: $(cat "$dir/check.out")"

# ---------------------------------------------------------------- explain: the profiles the alphas set
$T explain "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" >"$dir/explain.out" 2>&1 || bad "explain: $(cat "$dir/explain.out")"
cat "$dir/explain.out"
grep -qF "alpha^{S:P}_S(sigma[Proc=h1:$(inst $p1) or Proc=h2:$(inst $p2) or Proc=h3:$(inst $p3)](pi[Proc](Proc)), Clock)" "$dir/explain.out" ||
  bad "explain: Three's alpha does not name the three processes"
grep -q "^  sensor: ProcSample by pcp: pmFetch of proc.psinfo.cmd, proc.psinfo.ppid, proc.psinfo.utime from pmcd on $(echo "$H" | sed "s/,/, /g"); instance profile on each host: exactly the instances the alpha enables there" \
  "$dir/explain.out" || bad "explain: no line of the metrics and the profile of ProcSample"

# ---------------------------------------------------------------- PCP's library missing
# (tqmon loads libpcp when a PCP part is first used; the test build can be
# told a library name that does not exist): each way in says so, exits 1,
# and stores nothing
nolib="PCP's library libtqmon-test-no-pcp.so.3 cannot be loaded"
TQMON_TEST_PCP_LIB=libtqmon-test-no-pcp.so.3 $T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots 1 \
  --db "$dir/nolib.db" >"$dir/nolib.out" 2>"$dir/nolib.err"
rc=$?
[ $rc -eq 1 ] || bad "no libpcp: run exit $rc (expected 1)"
grep -qF "$nolib" "$dir/nolib.err" || bad "no libpcp: run: $(cat "$dir/nolib.err")"
[ ! -e "$dir/nolib.db" ] || bad "no libpcp: the store was written"
TQMON_TEST_PCP_LIB=libtqmon-test-no-pcp.so.3 $T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/nolib.tq" hinv.ncpu \
  2>"$dir/nolib-describe.err"
rc=$?
[ $rc -ne 0 ] || bad "no libpcp: describe exit 0"
grep -qF "$nolib" "$dir/nolib-describe.err" || bad "no libpcp: describe: $(cat "$dir/nolib-describe.err")"
[ ! -e "$dir/nolib.tq" ] || bad "no libpcp: describe wrote its configuration"

# ---------------------------------------------------------------- three hosts
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots 3 --format csv --stats "$dir/stats.json" \
  >"$dir/out.csv" 2>"$dir/err" || bad "run: exit $? $(cat "$dir/err")"
cat "$dir/out.csv"
section() { awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$1"; }
for k in 1 2 3; do
  eval "p=\$p$k"
  port=$(eval echo "\$PORT_h$k")
  i=$(inst "$p")
  cmd=$(pminfo -h "127.0.0.1:$port" -f proc.psinfo.cmd | sed -n "s/^ *inst \[$p or \"$i .*\] value \"\(.*\)\"$/\1/p")
  ppid=$(pminfo -h "127.0.0.1:$port" -f proc.psinfo.ppid | sed -n "s/^ *inst \[$p or \"$i .*\] value \(.*\)$/\1/p")
  [ -n "$cmd" ] && [ -n "$ppid" ] || bad "pminfo on h$k has no process $p"
  rows=$(section "$dir/out.csv" Three | grep -c "^h$k:$i,h$k,$cmd,$ppid,")
  [ "$rows" -eq 3 ] || bad "Three: h$k:$i should be $cmd (parent $ppid) at 3 ticks, as pminfo says; $rows rows"
done
[ "$(section "$dir/out.csv" Three | wc -l)" -eq 3 ] || [ "$(section "$dir/out.csv" Three | wc -l)" -eq 9 ] ||
  bad "Three: not 9 rows"
[ "$(section "$dir/out.csv" Same | grep -c "^h1:$(inst $p1),h2:$(inst $p2),sleep,$pmcdpid1,$pmcdpid2,")" -eq 3 ] ||
  bad "Same: the two sleeps should pair at 3 ticks, with h1's pmcd $pmcdpid1 and h2's $pmcdpid2: $(section "$dir/out.csv" Same)"
# a sleeping process uses no CPU: 0 ms over each of the ticks after the first
[ "$(section "$dir/out.csv" Rate | grep -c "^h1:$(inst $p4),0,")" -eq 2 ] ||
  bad "Rate: h1's sleep should have used 0 ms of CPU over ticks 2 and 3"
for k in 1 2 3; do
  n=$(pminfo -h "127.0.0.1:$(eval echo "\$PORT_h$k")" -f hinv.ncpu | sed -n 's/^ *value //p')
  pid=$(eval echo "\$pmcdpid$k")
  [ "$(section "$dir/out.csv" Cpus | grep -c "^h$k,$n,$pid,")" -eq 3 ] ||
    bad "Cpus: h$k should have $n CPUs and pmcd $pid at 3 ticks: $(section "$dir/out.csv" Cpus)"
done
python3 - "$dir/stats.json" <<'PY' || bad "the profile fetched more than the queries asked (see above)"
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
ok = True
for h in d["hosts"]:
    r = h["relations"]["ProcSample"]
    print(h["host"], "ProcSample enabled", r["enabled"], "last fetch", r["instances_last_fetch"], "values", r["values"])
    # h1: P1 (Three, Same) and P4 (Rate: the engine samples ProcSample for it)
    if h["state"] != "up" or r["instances_last_fetch"] != (2 if h["host"] == "h1" else 1):
        ok = False
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- unoptimized: the same answers
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots 3 --format csv --no-opt >"$dir/noopt.csv" 2>"$dir/noopt.err" ||
  bad "run --no-opt: exit $? $(cat "$dir/noopt.err")"
# the ticks differ between two runs: compare without the time
strip() { sed 's/,[0-9]*$//' "$1" | sort; }
[ "$(strip "$dir/out.csv")" = "$(strip "$dir/noopt.csv")" ] || bad "--no-opt answers differ"

# ---------------------------------------------------------------- a host lost mid-run, and back
# The run says at each tick how many hosts are up (--trace-level 2).  h3's
# pmcd is stopped after the second tick; once the run says h3 is lost, it
# is started again on the same port, and the run reconnects (libpcp's
# backoff set to 1 s by PMCD_RECONNECT_TIMEOUT).  Every wait is for a line
# of the run's log, not for a time.
N=20
# the log exists before the run starts: a grep of a file the background
# run has not opened yet counts nothing and ended the wait at once (the
# step's old flakiness: h3 was stopped before the run reached it)
: >"$dir/lost.err"
PMCD_RECONNECT_TIMEOUT=1 $T run "$dir/pcp.tq" "$dir/q.tq" "$dir/lives.tq" --pcp "$H" --snapshots $N --format csv --trace-level 2 \
  --db "$dir/lost.db" --stats "$dir/lost.json" >"$dir/lost.csv" 2>"$dir/lost.err" &
run=$!
# waitLog PATTERN COUNT: until the run's log has COUNT lines matching, or it ended
waitLog() {
  while [ "$(grep -c "$1" "$dir/lost.err")" -lt "$2" ] && kill -0 $run 2>/dev/null; do sleep 0.1; done
  [ "$(grep -c "$1" "$dir/lost.err")" -ge "$2" ]
}
waitLog 'tick [0-9]*: 3 of 3 hosts up' 2 || bad "the run did not reach its second tick"
pcpStop h3
waitLog "host h3 (127.0.0.1:$PORT_h3) lost at [0-9]*: .*: its entities end" 1 || bad "no message for the lost host"
pcpStart h3 "$PORT_h3" || bad "pmcd h3 did not start again on port $PORT_h3"
waitLog "host h3 (127.0.0.1:$PORT_h3) back at [0-9]*" 1 || bad "no message for the host back (the run ended first?)"
wait $run || bad "run with a host lost: exit $? $(cat "$dir/lost.err")"
grep -v 'info: tick' "$dir/lost.err"
lost=$(sed -n "s/.*host h3 (127.0.0.1:$PORT_h3) lost at \([0-9]*\):.*/\1/p" "$dir/lost.err")
back=$(sed -n "s/.*host h3 (127.0.0.1:$PORT_h3) back at \([0-9]*\):.*/\1/p" "$dir/lost.err")
section "$dir/lost.csv" Cpus >"$dir/lost.cpus"
python3 - "$dir/lost.json" "$dir/lost.cpus" "${lost:-0}" "${back:-0}" "$dir/lost.db" "$(inst $p3)" <<'PY' || bad "lost and back: see above"
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
rows = [l.strip().split(",") for l in open(sys.argv[2]) if l.strip()]
lost, back = int(sys.argv[3]), int(sys.argv[4])
late = {h["host"]: h["late"] for h in d["hosts"]}
ticks = d["ticks"]
t1 = [int(r[-1]) for r in rows if r[0] == "h1"]
t3 = [int(r[-1]) for r in rows if r[0] == "h3"]
print("ticks %d; Cpus rows h1 %d (late %d), h3 %d: %d before the loss at %d, %d after the return at %d"
      % (ticks, len(t1), late["h1"], len(t3), len([t for t in t3 if t < lost]), lost,
         len([t for t in t3 if t > back]), back))
t2 = [int(r[-1]) for r in rows if r[0] == "h2"]
ok = len(t1) == ticks and len(t2) == ticks              # h1 and h2 answered at every tick
ok &= late["h1"] == 0 and late["h2"] == 0               # never late
import sqlite3
db = sqlite3.connect(sys.argv[5])
p3 = "h3:" + sys.argv[6]
lives = {w: db.execute("SELECT valid_from, valid_to FROM %s WHERE %s = ? ORDER BY 1" % (tab, col), (w,)).fetchall()
         for tab, col, w in (("Procs", "Proc", p3), ("Hosts", "Host", "h3"), ("Hosts", "Host", "h1"), ("Hosts", "Host", "h2"))}
print("h3's process %s: %s; h3: %s; h1: %s; h2: %s" % (p3, lives[p3], lives["h3"], lives["h1"], lives["h2"]))
for w in (p3, "h3"):                                    # ended at the loss, begun again after the return
    iv = lives[w]
    ok &= len(iv) == 2 and iv[0][1] == lost and iv[1][0] > back
for w in ("h1", "h2"):                                  # one life, to the run's end
    ok &= len(lives[w]) == 1
ok &= any(t < lost for t in t3)                         # h3 answered before it was lost
ok &= not any(lost <= t <= back for t in t3)            # its entities ended: nothing while it was away
ok &= any(t > back for t in t3) or back >= max(t1)      # and begin again after it is back
ok &= [h for h in d["hosts"] if h["host"] == "h3"][0]["reconnects"] == 1
sys.exit(0 if ok and lost and back else 1)
PY

if [ $fails -ne 0 ]; then
  for n in h1 h2 h3; do echo "== pmcd $n"; tail -n 8 "$PCPDIR/$n/log/pmcd.log"; done
  exit 1
fi
echo "pcp_hosts: ok"
