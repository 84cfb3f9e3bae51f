#!/bin/sh
# pcp_sensors.sh - remote generated sensors (sensors/pmdatqmon.md,
# tqmon run --pcp-sensors): the example mailbox program runs on two
# "hosts", a1 and a2: two pmcds of the test's own on their own ports, each
# with a pmdatqmon agent that watches its program (-c: by command, since
# both share this machine's /dev/shm).  The central tqmon enables the
# sensors through the agents (the programs wait for P1's SendMessage to be
# enabled, -w), merges the two streams in time order and answers:
#   - ResumedbyP1Remote on both hosts: exactly what the programs' own logs
#     give (the independent observation; the same oracle mailbox_live.sh
#     uses for the program monitored locally with --exec and --attach);
#   - CrossHost, a join across the hosts in time: the same rows when the
#     recording of the live run is replayed, optimized and not;
#   - selective: the agents' counters show SendMessage written and sent
#     only for P1 on each host;
#   - a lag shorter than the agent's window: late records, counted and said;
#   - faults: a2's agent killed mid-run ends a2's entities with a message
#     while a1 goes on; the central monitor killed without disabling has
#     its enables released by the agent.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/sensors/pmdatqmon.pmns"
PCP_ACCESS="fetch, store"
pcpTest pcp_sensors
# (command names of this run's own: an agent watches only its program,
# never another test's beside it)
A=mbA$$
B=mbB$$
cp build/mailbox/mailbox "$dir/$A"
cp build/mailbox/mailbox "$dir/$B"
tqAgentStart a1 $A || exit 1
tqAgentStart a2 $B || exit 1
H1=127.0.0.1:$PORT_a1
H2=127.0.0.1:$PORT_a2
sed -n '/^-- "Which/q;p' examples/mailbox/monitor.tq >"$dir/decl.tq"
# ---------------------------------------------------------------- two hosts, to the programs' end
"$dir/$A" -n 500 -u 2000 -w -s 1 -l "$dir/a.log" &
pa=$!
"$dir/$B" -n 500 -u 2000 -w -s 2 -l "$dir/b.log" &
pb=$!
pids="$pa $pb"
tqAgentWaitRunning "$H1" $pa
tqAgentWaitRunning "$H2" $pb
$T run "$dir/decl.tq" tests/pcp/sensors.tq --pcp-sensors "$H1,$H2" --db "$dir/run.db" --quiet \
  --record "$dir/run.col" --stats "$dir/run.json" 2>"$dir/run.err"
rc=$?
cat "$dir/run.err"
[ $rc -eq 0 ] || bad "remote run: exit $rc"
wait $pa $pb
pids=""
grep -q " EXIT$" "$dir/a.log" && grep -q " EXIT$" "$dir/b.log" || bad "a program did not finish"
[ "$(grep -o '"state": "exited"' "$dir/run.json" | wc -l)" = 2 ] || bad "the run did not see both programs exit: $(grep -o '"hosts": .*' "$dir/run.json")"
grep -q "lost\|refused" "$dir/run.err" && bad "records lost or requests refused: $(cat "$dir/run.err")"
grep -q '"unmatched_ends": 0,' "$dir/run.json" || bad "ends of tuples never begun: $(grep -o '"unmatched_ends": [0-9]*' "$dir/run.json")"
{ awk -f tests/mailbox/resumed.awk "$dir/a.log" | sed 's/^/a1:/'; awk -f tests/mailbox/resumed.awk "$dir/b.log" | sed 's/^/a2:/'; } |
  sort >"$dir/resumed.expected"
sqlite3 "$dir/run.db" "SELECT Process FROM ResumedbyP1Remote" | sort >"$dir/resumed.got"
[ -s "$dir/resumed.expected" ] || bad "the logs have no process resumed by P1"
grep -q "^a1:" "$dir/resumed.got" && grep -q "^a2:" "$dir/resumed.got" || bad "ResumedbyP1Remote lacks a host: $(cat "$dir/resumed.got")"
diff "$dir/resumed.expected" "$dir/resumed.got" >"$dir/resumed.diff" || bad "ResumedbyP1Remote differs from the logs: $(cat "$dir/resumed.diff")"
# the cross-host join, against the recording replayed (optimized and not)
sqlite3 -csv "$dir/run.db" "SELECT Sender, Box, Waiter, valid_at FROM CrossHost ORDER BY 4, 3" >"$dir/cross.live"
[ -s "$dir/cross.live" ] || bad "CrossHost is empty"
for opt in "" --no-opt; do
  rm -f "$dir/replay.db"
  $T run "$dir/decl.tq" tests/pcp/sensors.tq --replay "$dir/run.col" --db "$dir/replay.db" --quiet $opt 2>>"$dir/replay.err" ||
    bad "replay $opt: $(cat "$dir/replay.err")"
  sqlite3 -csv "$dir/replay.db" "SELECT Sender, Box, Waiter, valid_at FROM CrossHost ORDER BY 4, 3" >"$dir/cross.replay"
  cmp -s "$dir/cross.live" "$dir/cross.replay" || bad "CrossHost live and replayed $opt differ: $(diff "$dir/cross.live" "$dir/cross.replay" | head -5)"
done
awk -F, '$1 != "a1:P1" || $3 !~ /^a2:/' "$dir/cross.live" | head -3 | grep . && bad "CrossHost rows not from a1:P1 to a2"
# selective: SendMessage written and sent for P1 only, on each host
for h in "$H1" "$H2"; do
  pminfo -h "$h" -f tqmon.entity.written >"$dir/written" 2>&1
  grep -q "SendMessage/P1\"" "$dir/written" || bad "$h: no SendMessage packets of P1 written: $(cat "$dir/written")"
  grep "SendMessage/" "$dir/written" | grep -v "SendMessage/P1\"" | grep -q inst && bad "$h: SendMessage written for others: $(cat "$dir/written")"
done

[ -n "${PHASE1:-}" ] && exit $fails
# ---------------------------------------------------------------- faults
"$dir/$A" -n 100000000 -u 2000 -l "$dir/a2.log" &
pa=$!
"$dir/$B" -n 100000000 -u 2000 -l "$dir/b2.log" &
pb=$!
pids="$pa $pb"
tqAgentWaitRunning "$H1" $pa
tqAgentWaitRunning "$H2" $pb
# a lag shorter than the agent's reorder window (20 ms): records come late,
# and the run says so (counted, never silently dropped)
$T run "$dir/decl.tq" tests/pcp/sensors.tq --pcp-sensors "$H1" --pcp-lag 1 --snapshots 100 --quiet \
  --stats "$dir/late.json" 2>"$dir/late.err" || bad "a run with --pcp-lag 1: $(cat "$dir/late.err")"
grep -q "host a1: [0-9]* records lost: [1-9][0-9]* late (past the lag)" "$dir/late.err" ||
  bad "--pcp-lag 1: no late records reported: $(cat "$dir/late.err")"
$T run "$dir/decl.tq" tests/pcp/sensors.tq --pcp-sensors "$H1,$H2" --db "$dir/fault.db" --quiet \
  --stats "$dir/fault.json" 2>"$dir/fault.err" &
tq=$!
pids="$pids $tq"
# (each wait judges by the value it last read: a second pminfo after the
# loop could fail on a busy machine and read nothing, a false failure)
i=0
v=$(pcpVal "$H2" tqmon.entity.enabled "$pb/SendMessage/P1")
while [ $i -lt 300 ] && [ "$v" != 1 ]; do sleep 0.1; v=$(pcpVal "$H2" tqmon.entity.enabled "$pb/SendMessage/P1"); i=$((i + 1)); done
[ "$v" = 1 ] || bad "the central monitor did not enable P1 on a2 (enabled: '$v')"
sleep 1
agent2=$(pgrep -P "$PID_a2" -f pmdatqmon)
[ -n "$agent2" ] || bad "no agent under a2's pmcd"
kill -9 $agent2
i=0
while [ $i -lt 300 ] && ! grep -q "host a2 (127.0.0.1:$PORT_a2) lost at" "$dir/fault.err"; do sleep 0.1; i=$((i + 1)); done
grep -q "host a2 (127.0.0.1:$PORT_a2) lost at" "$dir/fault.err" || bad "a2's agent killed: no message: $(cat "$dir/fault.err")"
w1=$(pcpVal "$H1" tqmon.entity.sent "$pa/SendMessage/P1")
i=0
w2=$w1
while [ $i -lt 300 ] && [ "${w2:-0}" -le "${w1:-0}" ]; do sleep 0.1; w2=$(pcpVal "$H1" tqmon.entity.sent "$pa/SendMessage/P1"); i=$((i + 1)); done
[ "${w2:-0}" -gt "${w1:-0}" ] || bad "a1 stopped when a2's agent died ($w1, then $w2)"
# the central monitor killed: its enables on a1 are released
kill -9 $tq
wait $tq 2>/dev/null
i=0
v=$(pcpVal "$H1" tqmon.entity.enabled "$pa/SendMessage/P1")
while [ $i -lt 300 ] && [ "$v" != 0 ]; do sleep 0.1; v=$(pcpVal "$H1" tqmon.entity.enabled "$pa/SendMessage/P1"); i=$((i + 1)); done
[ "$v" = 0 ] || bad "a killed monitor's enables were not released (enabled: '$v')"
progsStop $pa $pb
pids=""
grep -q "ERROR: AddressSanitizer\|runtime error" "$PCPDIR"/a*/log/tqmon.log && bad "sanitizer: $(cat "$PCPDIR"/a*/log/tqmon.log)"
[ $fails -eq 0 ] || { echo "agent logs:"; cat "$PCPDIR"/a*/log/tqmon.log*; echo "monitor:"; cat "$dir/fault.err"; }
exit $fails
