#!/bin/sh
# pcp_results_hostile.sh - the agent reads /dev/shm/tqmon-results.PID (a
# running tqmon's results, --pcp-export) as root, in a directory every user
# writes: it trusts only the file tqmon itself would have written
# (sensors/README.md, the trust model; sensors/pmdatqmon.md).  Under a pmcd
# of the test's own, files are planted under the process ids of sleeps the
# test starts (root's):
#   - a FIFO: a plain open for reading blocked the agent until pmcd gave up
#     on it; now the fetch answers at once, the same agent;
#   - a symbolic link to a root-only file of results: followed, it showed
#     the file's rows to every client;
#   - a file of results owned by another user (nobody), a file of mode
#     0644, a file with a second link: each served before;
# none of them is served, each is refused in the agent's log; a good file
# (root's, 0600, one link) beside them is served, so the reading works.
set -u
AG=${AG:-build/asan/pmdatqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c none -l \$d/log/tqmon.log"
pcpTest pcp_results_hostile
[ "$(id -u)" = 0 ] || { echo "SKIP: planting another user's file needs root"; exit 77; }
pcpStart r1 || exit 1
H=127.0.0.1:$PORT_r1
log=$PCPDIR/r1/log/tqmon.log
planted=""
trap 'rm -f $planted; progsStop $pids; pcpStopAll' EXIT
results() { # results NAME: a results file with one result NAME and one row
  printf 'tqmon-results 1\nnow 1\nresult %s 1 1 Who\nrow %s 7 1795917000000000000 secret-%s\n' "$1" "$1" "$1"
}
for k in good fifo link other mode links; do
  sleep 600 &
  eval "p_$k=$!"
  pids="$pids $!"
  planted="$planted /dev/shm/tqmon-results.$!"
done
# the good one
(umask 077 && results Good >"/dev/shm/tqmon-results.$p_good")
# a FIFO
mkfifo -m 0600 "/dev/shm/tqmon-results.$p_fifo"
# a symbolic link to a root-only file of results
(umask 077 && results Linked >"$dir/target")
ln -s "$(cd "$dir" && pwd)/target" "/dev/shm/tqmon-results.$p_link"
# another user's file
results Other >"/dev/shm/tqmon-results.$p_other"
chmod 0600 "/dev/shm/tqmon-results.$p_other"
chown 65534 "/dev/shm/tqmon-results.$p_other"
# mode 0644
results Mode >"/dev/shm/tqmon-results.$p_mode"
chmod 0644 "/dev/shm/tqmon-results.$p_mode"
# a second link
(umask 077 && results Links >"/dev/shm/tqmon-results.$p_links")
ln "/dev/shm/tqmon-results.$p_links" "/dev/shm/tqmon-second.$$"
planted="$planted /dev/shm/tqmon-second.$$"

agentPid() { pminfo -h "$H" -f tqmon.agent.pid 2>/dev/null | sed -n 's/^ *value //p'; }
a0=$(agentPid)
[ -n "$a0" ] || { bad "the agent does not answer"; exit 1; }
start=$(date +%s)
timeout 60 pminfo -h "$H" -f tqmon.result.valid tqmon.result.tuple >"$dir/fetch" 2>&1 || bad "pminfo: exit $?: $(cat "$dir/fetch")"
took=$(($(date +%s) - start))
cat "$dir/fetch"
a1=$(agentPid)
[ "$a1" = "$a0" ] || bad "the agent is not the same process after the fetch ($a0, then '$a1'): it hung on the FIFO"
[ $took -lt 4 ] || bad "the fetch took $took s (pmcd's agent timeout is 5 s: a FIFO held it)"
grep -q "\"$p_good/Good\"" "$dir/fetch" && grep -q 'Who=secret-Good' "$dir/fetch" || bad "the good file is not served"
for k in Linked Other Mode Links; do
  grep -q "secret-$k" "$dir/fetch" && bad "a planted file is served: $k"
done
for k in fifo link other mode links; do
  eval "p=\$p_$k"
  grep -q "/dev/shm/tqmon-results.$p is not the results of tqmon process $p.*refused" "$log" || bad "no refusal of the $k file in the agent's log"
done
grep "refused" "$log"
[ -e "$dir/target" ] && [ -p "/dev/shm/tqmon-results.$p_fifo" ] || bad "a planted name or its target was removed"
exit $fails
