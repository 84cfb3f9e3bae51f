#!/bin/sh
# pcp_proxy.sh - tqmon through pmproxy, PCP's documented way to pmcds a
# client cannot reach directly (sensors/pcp.md, "Through pmproxy").  The
# test starts two pmcds of its own (h1 with a pmdatqmon agent, h2) and a
# pmproxy of its own on a free port (tests/pcp/lib.sh, pcpProxyStart);
# h1 is reached through the proxy (PCP's HOST@PROXY), h2 directly:
#   - describe and a run over both: the answers are what pminfo reads
#     from each pmcd, and pmcd.pid (which differs per pmcd: the three
#     pmcds of a test share one /proc) is h1's pmcd through the proxy;
#   - the instance profile passes through pmproxy: one process fetched on
#     h1, the others excluded, the bytes counted on the proxy's socket;
#   - pmproxy killed mid-run: h1 is lost with a message (its pmcd still
#     up), h2 goes on with a row at every tick, never late;
#   - --pcp-sensors through the proxy, with #COMMAND (not @COMMAND: '@' is
#     the proxy's): a command the agent does not watch is refused by name,
#     the program's command gives the answer of its own log.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
PCP_ACCESS="fetch, store"
pcpTest pcp_proxy
A=mbP$$
cp build/mailbox/mailbox "$dir/$A"
tqAgentStart h1 $A || exit 1
PCP_EXTRA_AGENTS=""
pcpStart h2 || exit 1
pcpProxyStart px h1 || exit 1
V1="127.0.0.1:$PORT_h1@127.0.0.1:$PORT_px"
H2="127.0.0.1:$PORT_h2"
sleep 600 &
p1=$!
pids="$p1"
I=$(inst $p1)

# ---------------------------------------------------------------- describe and a run through the proxy
$T pcp describe -h "$V1" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid pmcd.pid 2>"$dir/describe.err" ||
  bad "describe through pmproxy: $(cat "$dir/describe.err")"
cat >"$dir/q.tq" <<EOF
range of S is ProcSample
retrieve into Procs (S.Proc, S.Host, S.PsinfoCmd, S.PsinfoPpid) where S.Proc = "h1:$I" or S.Proc = "h2:$I"

range of H is HostSample
retrieve into Pids (H.Host, H.PmcdPid)
EOF
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$V1,$H2" --snapshots 3 --format csv --stats "$dir/run.json" \
  >"$dir/run.csv" 2>"$dir/run.err" || bad "run through pmproxy: exit $? $(cat "$dir/run.err")"
cat "$dir/run.err"
section() { awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$1"; }
for h in h1 h2; do
  pid=$(eval echo "\$PID_$h")
  n=$(section "$dir/run.csv" Pids | grep -c "^$h,$pid,")
  [ "$n" -eq 3 ] || bad "Pids: $h's pmcd is process $pid: $n of 3 rows say so: $(section "$dir/run.csv" Pids)"
  port=$(eval echo "\$PORT_$h")
  ppid=$(pminfo -h "127.0.0.1:$port" -f proc.psinfo.ppid | sed -n "s/^ *inst \[$p1 or \"$I .*\] value \(.*\)$/\1/p")
  n=$(section "$dir/run.csv" Procs | grep -c "^$h:$I,$h,sleep,$ppid,")
  [ "$n" -eq 3 ] || bad "Procs: $h:$I should be sleep (parent $ppid) at 3 ticks: $(section "$dir/run.csv" Procs)"
done
python3 - "$dir/run.json" "$V1" <<'PY' || bad "through pmproxy, the profile or the counts (see above)"
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
h = {x["host"]: x for x in d["hosts"]}
ok = True
for n in ("h1", "h2"):
    r = h[n]["relations"]["ProcSample"]
    print(n, h[n]["spec"], "ProcSample last fetch", r["instances_last_fetch"], "values", r["values"], "excluded",
          r["excluded"], "bytes", h[n]["bytes_received"])
    ok &= h[n]["state"] == "up" and r["instances_last_fetch"] == 1 and r["excluded"] > 0 and h[n]["bytes_received"] > 0
ok &= h["h1"]["spec"] == sys.argv[2]
ok &= h["h1"]["relations"]["ProcSample"]["values"] == h["h2"]["relations"]["ProcSample"]["values"]
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- pmproxy killed mid-run
N=12
: >"$dir/lost.err"
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$V1,$H2" --snapshots $N --format csv --trace-level 2 --stats "$dir/lost.json" \
  >"$dir/lost.csv" 2>"$dir/lost.err" &
run=$!
pids="$pids $run"
waitLog() {
  while [ "$(grep -c "$1" "$dir/lost.err")" -lt "$2" ] && kill -0 $run 2>/dev/null; do sleep 0.1; done
  [ "$(grep -c "$1" "$dir/lost.err")" -ge "$2" ]
}
waitLog 'tick [0-9]*: 2 of 2 hosts up' 2 || bad "the run did not reach its second tick"
pcpStop px
waitLog "host h1 ($V1) lost at [0-9]*: .*: its entities end" 1 || bad "pmproxy killed: no message for h1: $(cat "$dir/lost.err")"
wait $run || bad "run with pmproxy killed: exit $?"
pids="$p1"
grep -v 'info: tick' "$dir/lost.err"
kill -0 "$PID_h1" || bad "h1's pmcd died with the proxy"
n=$(section "$dir/lost.csv" Pids | grep -c "^h2,$PID_h2,")
late=$(python3 -c 'import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
print([h for h in d["hosts"] if h["host"] == "h2"][0]["late"])' "$dir/lost.json")
[ "$n" -eq $N ] && [ "$late" = 0 ] || bad "h2 should answer at all $N ticks, never late: $n rows, late $late"

# ---------------------------------------------------------------- --pcp-sensors through the proxy, #COMMAND
pcpProxyStart px2 h1 || exit 1
V1="127.0.0.1:$PORT_h1@127.0.0.1:$PORT_px2"
sed -n '/^-- "Which/q;p' examples/mailbox/monitor.tq >"$dir/decl.tq"
cat >"$dir/resumed.tq" <<'EOF'
range of S is SendMessage
range of W is Waiting
retrieve into ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "h1:P1"
when S precede end of W
EOF
"$dir/$A" -n 300 -u 2000 -w -l "$dir/mb.log" &
pa=$!
pids="$pids $pa"
tqAgentWaitRunning "$V1" $pa
$T run "$dir/decl.tq" "$dir/resumed.tq" --pcp-sensors "$V1#nosuch" --quiet 2>"$dir/nosuch.err"
rc=$?
[ $rc -ne 0 ] && grep -q "host $V1 left out: no program nosuch among those the agent watches" "$dir/nosuch.err" ||
  bad "#nosuch: exit $rc, $(cat "$dir/nosuch.err")"
$T run "$dir/decl.tq" "$dir/resumed.tq" --pcp-sensors "$V1#$A" --db "$dir/sensors.db" --quiet 2>"$dir/sensors.err" ||
  bad "--pcp-sensors through pmproxy: exit $? $(cat "$dir/sensors.err")"
wait $pa
pids="$p1"
awk -f tests/mailbox/resumed.awk "$dir/mb.log" | sed 's/^/h1:/' | sort >"$dir/resumed.expected"
sqlite3 "$dir/sensors.db" "SELECT Process FROM ResumedbyP1" | sort >"$dir/resumed.got"
[ -s "$dir/resumed.expected" ] || bad "the log has no process resumed by P1"
diff "$dir/resumed.expected" "$dir/resumed.got" >"$dir/resumed.diff" ||
  bad "ResumedbyP1 through pmproxy differs from the log: $(head -5 "$dir/resumed.diff")"
exit $fails
