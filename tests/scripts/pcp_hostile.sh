#!/bin/sh
# pcp_hostile.sh - pmdatqmon (run by pmcd, as root on a real host) maps the
# segments that users' programs make, so a program can try to harm it
# (tests/pcp/hostile.c):
#   - it shrinks its segment under the agent (ftruncate): the agent must
#     live on (a read past the new end raised SIGBUS and ended it), say so
#     in its log, and let the program go;
#   - it stamps a packet an hour ahead: the packet is invalid, counted, and
#     the 100 good packets after it are not held back (they were queued
#     until the program exited, and the queue grew without bound);
#   - it begins 270,000 intervals and ends none: past 262,144 open at once
#     a begin is invalid, counted (each one was the agent's memory).
# The agent knows two programs at once (-P 2): the third takes the slot of
# the first, which exited (slots were never reused: after 256 programs the
# agent watched no new one).  A new program with the pid of one that exited
# is watched (it was taken for the old one, for good).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
SH=build/shm/hostile
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
SHC=shrk$$
PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c $SHC -P 2 -l \$d/log/tqmon.log"
PCP_ACCESS="fetch, store"
pcpTest pcp_hostile
pcpStart a1 || exit 1
H=127.0.0.1:$PORT_a1
agentlog=$PCPDIR/a1/log/tqmon.log
pminfo -h "$H" -f tqmon.agent >/dev/null 2>&1
agent=$(pgrep -f "$AG -d 212 .* -c $SHC" | head -1)
[ -n "$agent" ] || { bad "no agent: $(cat "$agentlog")"; exit 1; }

cp $SH "$dir/$SHC"
"$dir/$SHC" future 2>"$dir/future.err" || bad "the program: $(cat "$dir/future.err")"
i=0
while [ $i -lt 50 ] && ! grep -q "exited: " "$agentlog"; do sleep 0.1; i=$((i + 1)); done
grep -q "invalid packet: Ev: a packet stamped 3[56][0-9][0-9]\.[0-9]* s after the agent's clock" "$agentlog" ||
  bad "future: the agent's log: $(tail -3 "$agentlog")"
grep -q "exited: 100 packets, 1 lost (0 ring full or no ring, 1 invalid, 0 late)" "$agentlog" ||
  bad "future: the agent's count: $(grep "exited: " "$agentlog")"

"$dir/$SHC" opens 2>"$dir/opens.err" || bad "the program: $(cat "$dir/opens.err")"
i=0
while [ $i -lt 300 ] && [ "$(grep -c "exited: " "$agentlog")" -lt 2 ]; do sleep 0.1; i=$((i + 1)); done
grep -q "invalid packet: Iv: more than 262144 intervals open at once" "$agentlog" ||
  bad "opens: the agent's log: $(tail -3 "$agentlog")"
grep "exited: " "$agentlog" | tail -n 1 | grep -q "exited: 270000 packets, 7856 lost (0 ring full or no ring, 7856 invalid, 0 late)" ||
  bad "opens: the agent's count: $(grep "exited: " "$agentlog" | tail -n 1)"

"$dir/$SHC" shrink 2>"$dir/shrink.err"
[ $? -eq 0 ] || bad "the program: $(cat "$dir/shrink.err")"
grep -q "shrunk" "$dir/shrink.err" || bad "the program did not shrink its segment: $(cat "$dir/shrink.err")"
i=0
while [ $i -lt 50 ] && ! grep -q "shrank its sensor segment" "$agentlog"; do sleep 0.1; i=$((i + 1)); done
st=$(ps -o stat= -p "$agent" 2>/dev/null)
[ -n "$st" ] && [ "${st#Z}" = "$st" ] || bad "the agent died: $(tail -5 "$agentlog")"
grep -q "program [0-9]* shrank its sensor segment /dev/shm/tqmon\.[0-9]* ([0-9]* of its [0-9]* bytes) under the agent: not watched from here on" "$agentlog" ||
  bad "the agent's log does not say so: $(tail -5 "$agentlog")"
pminfo -h "$H" -f tqmon.agent.clients >"$dir/after" 2>&1 || bad "the agent does not answer after: $(cat "$dir/after")"
# the third program took the first one's slot, and the first is forgotten
first=$(sed -n 's/.*watching program \([0-9]*\):.*/\1/p' "$agentlog" | head -n 1)
[ "$(grep -c "watching program" "$agentlog")" = 3 ] || bad "reuse: $(grep -c "watching program" "$agentlog") of the 3 programs watched"
grep -q "program $first forgotten: its slot is taken by a new program" "$agentlog" || bad "reuse: the agent's log: $(tail -5 "$agentlog")"
pminfo -h "$H" -f tqmon.program.packets >"$dir/programs" 2>&1
grep -q "\"$first\"" "$dir/programs" && bad "reuse: the forgotten program is still an instance: $(cat "$dir/programs")"
[ "$(grep -c "inst \[" "$dir/programs")" = 2 ] || bad "reuse: instances: $(cat "$dir/programs")"

"$dir/$SHC" again 2>"$dir/again.err" &
again=$!
wait $again || bad "the program: $(cat "$dir/again.err")"
i=0
while [ $i -lt 50 ] && [ "$(grep -c "program $again exited: " "$agentlog")" -lt 2 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(grep -c "watching program $again:" "$agentlog")" = 2 ] ||
  bad "again: the second program of pid $again was not watched: $(grep "$again" "$agentlog")"
[ "$(grep -c "program $again exited: 10 packets, 0 lost" "$agentlog")" = 2 ] ||
  bad "again: the agent's counts: $(grep "$again" "$agentlog")"
grep -q "ERROR: AddressSanitizer\|runtime error" "$agentlog" && bad "sanitizer: $(cat "$agentlog")"
[ $fails -eq 0 ] || { echo "agent log:"; cat "$agentlog"; }
[ $fails -eq 0 ]
