#!/bin/sh
# pcp_agent.sh - pmdatqmon, the tqmon PCP agent (sensors/pmdatqmon.md),
# under a pmcd of the test's own (tests/pcp/lib.sh), watching the example
# mailbox program (examples/mailbox/) that made its own segment:
#   - the agent finds the program and lists its relations as instances of
#     tqmon.records, its catalog, its state;
#   - a client (tests/pcp/tqpcpclient.c) enables SendMessage on P1 only:
#     every record it receives is a send of P1, and the agent's counters
#     show that only P1's packets were written and sent, as many as it got;
#   - an entity named before the program declares it is enabled from its
#     first packet (tests/shm/early.c declares W2 late);
#   - enables are per client: an enable stored just after another
#     client's request is the storing client's; a pmstore (a context that
#     ends at once) leaves nothing enabled; a client killed without disabling has its
#     enables released (the program's flag goes back to 0);
#   - a client that does not fetch while its queue (-q) is full is told how
#     many records it missed, and tqmon.agent.dropped counts them;
#   - a relation asked whole (Process *) first gives the tuples open now;
#   - the program exits: the client gets the end of every open tuple and
#     a record of kind 100, and the program's state is "exited".
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
CL=${CL:-build/asan/tqpcpclient}
MB=build/mailbox/mailbox
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
# the agent watches only this run's program (a command name of its own):
# never another test's beside it
MBC=mbag$$
# (-q 2000: a client's queue holds 2000 records, so that one that does not
# fetch loses some, counted)
PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c $MBC -q 2000 -l \$d/log/tqmon.log"
PCP_ACCESS="fetch, store"
pcpTest pcp_agent
pcpStart a1 || exit 1
H=127.0.0.1:$PORT_a1
agentlog=$PCPDIR/a1/log/tqmon.log
# (ASan in the agent: its reports go to the agent's log)

cp $MB "$dir/$MBC"
"$dir/$MBC" -n 100000000 -u 2000 -l "$dir/mb.log" &
mb=$!
pids="$mb"
val() { pminfo -h "$H" -f "$1" 2>/dev/null | sed -n "s|^ *inst \[[0-9]* or \"$2\"\] value \(.*\)$|\1|p"; }
i=0
while [ $i -lt 300 ] && [ "$(val tqmon.program.state "$mb")" != '"running"' ]; do sleep 0.1; i=$((i + 1)); done
[ "$(val tqmon.program.state "$mb")" = '"running"' ] || { bad "the agent does not watch the program: $(cat "$agentlog")"; exit 1; }
pminfo -h "$H" -f tqmon.records >/dev/null 2>&1
pminfo -h "$H" -f tqmon.program.catalog >"$dir/catalog" 2>&1
grep -q 'SendMessage event entity,entity flag=0' "$dir/catalog" || bad "catalog: $(cat "$dir/catalog")"
# every metric and instance domain has its help text (sensors/pmdatqmon/help)
pminfo -h "$H" -tT tqmon >"$dir/help" 2>&1
n=$(grep -c '^tqmon\.' "$dir/help")
[ "$n" -eq 24 ] && ! grep -q "One-line Help: Error\|<no\|No help" "$dir/help" || bad "help text: $n metrics: $(grep -i -m3 "error\|no help" "$dir/help")"
grep -q '^tqmon.control \[store "set PID/Relation ENTITY COUNT" to enable' "$dir/help" || bad "tqmon.control's help: $(grep -A2 '^tqmon.control' "$dir/help")"

# ---------------------------------------------------------------- selective, remote enabling
$CL -h "$H" -t 3 "set $mb/SendMessage P1 1" >"$dir/sel.out" 2>"$dir/sel.err" || bad "client: $(cat "$dir/sel.err")"
got=$(grep -c "^$mb/SendMessage .* kind=1 " "$dir/sel.out")
[ "$got" -gt 0 ] || bad "no SendMessage record: $(head "$dir/sel.out")"
other=$(grep "^$mb/SendMessage " "$dir/sel.out" | awk '$5 != "P1"' | head -3)
[ -z "$other" ] || bad "sends of other processes than P1: $other"
pminfo -h "$H" -f tqmon.entity.written >"$dir/written" 2>&1
pminfo -h "$H" -f tqmon.entity.sent >"$dir/sent" 2>&1
cat "$dir/written" "$dir/sent"
w=$(val tqmon.entity.written "$mb/SendMessage/P1")
s=$(val tqmon.entity.sent "$mb/SendMessage/P1")
[ "$s" = "$got" ] || bad "the agent says it sent $s records of P1, the client got $got"
[ -n "$w" ] && [ "$w" -ge "$got" ] || bad "the agent says P1 wrote $w SendMessage packets, the client got $got"
grep "SendMessage/" "$dir/written" | grep -v "SendMessage/P1\"" | grep -q inst && bad "packets of SendMessage written for other entities: $(cat "$dir/written")"
# the program's own log: P1 sent more than the client saw only before and after it
all=$(awk '$2 == "SEND" && $3 == "P1"' "$dir/mb.log" | wc -l)
[ "$all" -ge "$got" ] || bad "the client got $got sends of P1, the program made $all"
[ "$(val tqmon.entity.enabled "$mb/SendMessage/P1")" = 0 ] || bad "P1 still enabled after the client withdrew"

# ---------------------------------------------------------------- an enable is the storing client's
# another client's request just before the store (-o: a second context of
# the client fetches from the agent, then ends): the enable stays the
# storing client's, and its records come to it.  (It was counted for the
# client of the agent's last request, released when that one ended: the
# storing client got nothing.)
$CL -h "$H" -t 2 -o "set $mb/SendMessage P1 1" >"$dir/other.out" 2>"$dir/other.err" || bad "client -o: $(cat "$dir/other.err")"
got=$(grep -c "^$mb/SendMessage .* kind=1 " "$dir/other.out")
[ "$got" -gt 0 ] || bad "an enable stored after another client's fetch brought its client nothing: $(tail -3 "$agentlog")"
[ "$(val tqmon.entity.enabled "$mb/SendMessage/P1")" = 0 ] || bad "P1 still enabled after the client -o withdrew"

# ---------------------------------------------------------------- an entity named before the program declares it
# early (tests/shm/early.c) declares W1 and works, then declares W2 once
# the file go exists, which the test makes after the client enabled
# Enqueue on W2: every one of W2's 1000 jobs comes to the client, from
# its first (none came: the agent wrote the counters of the entities the
# program had at the store only)
mkdir -p "$dir/e"
cp build/shm/early "$dir/e/$MBC"
"$dir/e/$MBC" 1000 after "$dir/go" >"$dir/early.log" 2>&1 &
ep=$!
pids="$pids $ep"
i=0
while [ $i -lt 300 ] && [ "$(val tqmon.program.state "$ep")" != '"running"' ]; do sleep 0.1; i=$((i + 1)); done
$CL -h "$H" -t 3 "set $ep/Enqueue W2 1" >"$dir/named.out" 2>"$dir/named.err" &
cl=$!
i=0
while [ $i -lt 300 ] && ! grep -q "^# enabled" "$dir/named.out"; do sleep 0.1; i=$((i + 1)); done
touch "$dir/go"
wait $cl || bad "client of early: $(cat "$dir/named.err")"
wait $ep
got=$(grep "^$ep/Enqueue .* kind=1 .* W2 [0-9]*$" "$dir/named.out" | awk '{print $NF}' | sort -n | uniq | awk 'NR - 1 == $1 { n++ } END { print n + 0 }')
[ "$got" = 1000 ] || bad "W2, named before it was declared: $got of its 1000 jobs 0.. came ($(grep -c "^$ep/Enqueue" "$dir/named.out") Enqueue records)"

# ---------------------------------------------------------------- per client: released when the context ends
pmstore -h "$H" tqmon.control "set $mb/SendMessage P2 1" >"$dir/pmstore.out" 2>&1 || bad "pmstore: $(cat "$dir/pmstore.out")"
sleep 0.3
# (no instance at all when P2 wrote nothing while enabled)
case "$(val tqmon.entity.enabled "$mb/SendMessage/P2")" in "" | 0) ;; *) bad "pmstore's enable outlived its context" ;; esac
w1=$(val tqmon.entity.written "$mb/SendMessage/P2")
sleep 0.5
w2=$(val tqmon.entity.written "$mb/SendMessage/P2")
[ "${w1:-0}" = "${w2:-0}" ] || bad "P2 still written after its only client went ($w1, then $w2)"
# a bad request is refused, field by field
pmstore -h "$H" tqmon.control "set $mb/NoSuch P1 1" >"$dir/bad1" 2>&1 && bad "an unknown relation was accepted"
pmstore -h "$H" tqmon.control "enable everything" >"$dir/bad2" 2>&1 && bad "a malformed request was accepted"

# a client killed without disabling
$CL -h "$H" -t 100 -x "set $mb/SendMessage P3 1" >"$dir/kill.out" 2>&1 &
cl=$!
i=0
while [ $i -lt 300 ] && [ "$(val tqmon.entity.enabled "$mb/SendMessage/P3")" != 1 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(val tqmon.entity.enabled "$mb/SendMessage/P3")" = 1 ] || bad "P3 not enabled by the client"
kill -9 $cl
wait $cl 2>/dev/null
i=0
while [ $i -lt 300 ] && [ "$(val tqmon.entity.enabled "$mb/SendMessage/P3")" != 0 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(val tqmon.entity.enabled "$mb/SendMessage/P3")" = 0 ] || bad "a killed client's enables were not released"
grep -q "enables released" "$agentlog" || bad "the agent's log does not say it released them"

# ---------------------------------------------------------------- a full queue: dropped, counted, said
d0=$(pminfo -h "$H" -f tqmon.agent.dropped | sed -n 's/^ *value \([0-9]*\)$/\1/p')
$CL -h "$H" -t 0.5 -d 4 "set $mb/SendMessage * 1" >"$dir/full.out" 2>"$dir/full.err" || bad "client: $(cat "$dir/full.err")"
missed=$(sed -n 's/.* missed=\([0-9]*\).*/\1/p' "$dir/full.out" | head -1)
got=$(grep -c "^$mb/SendMessage .* kind=1 " "$dir/full.out")
d1=$(pminfo -h "$H" -f tqmon.agent.dropped | sed -n 's/^ *value \([0-9]*\)$/\1/p')
[ "${missed:-0}" -gt 0 ] || bad "a client that did not fetch for 4 s was not told of records missed: $(head -3 "$dir/full.out")"
[ "$got" -ge 2000 ] || bad "the full queue gave $got records, it holds 2000"
[ $((d1 - d0)) -ge "${missed:-0}" ] || bad "tqmon.agent.dropped grew by $((d1 - d0)), the client missed $missed"

# ---------------------------------------------------------------- whole relations, and the program's exit
touch "$dir/none"
rm -f "$dir/stop"
$CL -h "$H" -w "$dir/stop" "set $mb/Process * 1" "set $mb/Waiting * 1" >"$dir/whole.out" 2>"$dir/whole.err" &
cl=$!
sleep 1.5
progsStop $mb
pids=""
i=0
while [ $i -lt 300 ] && ! grep -q " kind=100" "$dir/whole.out"; do sleep 0.1; i=$((i + 1)); done
touch "$dir/stop"
wait $cl || bad "client: $(cat "$dir/whole.err")"
grep -q "^$mb/Process .* kind=2 .* P1 " "$dir/whole.out" || bad "no open Process tuple of P1 came first: $(head -5 "$dir/whole.out")"
grep -q " kind=100" "$dir/whole.out" || bad "no record of the program's exit"
# every tuple begun was ended (by the program, or at its exit)
begun=$(grep -c "^$mb/Process .* kind=2 " "$dir/whole.out")
ended=$(grep -c "^$mb/Process .* kind=3 " "$dir/whole.out")
[ "$begun" = "$ended" ] || bad "$begun Process tuples begun, $ended ended"
[ "$(val tqmon.program.state "$mb")" = '"exited"' ] || bad "program state: $(val tqmon.program.state "$mb")"
grep -q "program $mb exited" "$agentlog" || bad "the agent's log does not say the program exited"
grep -q "ERROR: AddressSanitizer\|runtime error" "$agentlog" && bad "sanitizer: $(cat "$agentlog")"
[ $fails -eq 0 ] || { echo "agent log:"; cat "$agentlog"; }
exit $fails
