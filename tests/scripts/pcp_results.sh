#!/bin/sh
# pcp_results.sh - a running tqmon's results as PCP metrics (tqmon run
# --pcp-export, served by pmdatqmon: tqmon.result.*, sensors/pmdatqmon.md).
# The mailbox program runs under tqmon --exec with a query of the processes
# ready to run now; while it runs, pmrep reads tqmon.result.valid through a pmcd of
# the test's own, and pminfo the tuples (instances PID/ReadyNow/ROWID):
#   - pmrep gives the number of tuples valid now and the rows so far (which
#     grow) at every sample;
#   - a tuple's value names a process and a mailbox of the program, and is
#     one the run itself stored (the same row in its SQLite file);
#   - when the run ends its results are gone from the agent.
# (The program runs to its end: tqmon has no handler for SIGTERM.)
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c none -l \$d/log/tqmon.log"
pcpTest pcp_results
command -v pmrep >/dev/null || { echo "SKIP: no pmrep"; exit 77; }
pcpStart r1 || exit 1
H=127.0.0.1:$PORT_r1
sed -n '/^-- "Which/q;p' examples/mailbox/monitor.tq >"$dir/decl.tq"
$T run "$dir/decl.tq" tests/pcp/results.tq --pcp-export --db "$dir/run.db" --quiet 2>"$dir/run.err" \
  --exec build/mailbox/mailbox -n 4000 -u 3000 -l "$dir/mb.log" &
tq=$!
pids=$tq
i=0
while [ $i -lt 300 ] && ! pminfo -h "$H" -f tqmon.result.valid 2>/dev/null | grep -q "\"$tq/ReadyNow\""; do
  sleep 0.1
  i=$((i + 1))
done
pminfo -h "$H" -f tqmon.result.valid >"$dir/valid" 2>&1
grep -q "\"$tq/ReadyNow\"" "$dir/valid" || { bad "the agent serves no result of tqmon $tq: $(cat "$dir/valid" "$dir/run.err")"; exit 1; }
# pmrep, while the query runs: 5 samples of the tuples valid now
# (pmrep is PCP's python: the system's python3 has its module)
PATH=/usr/bin:$PATH pmrep -r -h "$H" -s 5 -t 0.5 -o csv -i "$tq/ReadyNow" tqmon.result.valid tqmon.result.rows >"$dir/pmrep.csv" 2>"$dir/pmrep.err" ||
  bad "pmrep: $(cat "$dir/pmrep.err")"
cat "$dir/pmrep.csv"
[ "$(grep -c . "$dir/pmrep.csv")" -ge 5 ] || bad "pmrep gave $(grep -c . "$dir/pmrep.csv") lines"
awk -F, 'NR > 1 && $2 !~ /^[0-9]+$/ { n++ } END { exit n > 0 }' "$dir/pmrep.csv" || bad "pmrep: a sample without the tuples valid now"
awk -F, 'NR > 1 && $3 + 0 < last { n++ } NR > 1 { last = $3 + 0 } END { exit !(n == 0 && last > 0) }' "$dir/pmrep.csv" ||
  bad "pmrep: the rows so far do not grow from zero"
# the tuples: values of the program's entities, rows the run stored
# (SQL quoting: a process name is P and digits, checked first)
i=0
t=""
while [ $i -lt 200 ] && [ -z "$t" ] && kill -0 $tq 2>/dev/null; do
  pminfo -h "$H" -f tqmon.result.tuple >"$dir/tuples" 2>&1
  t=$(sed -n "s|^ *inst \[[0-9]* or \"$tq/ReadyNow/[0-9]*\"\] value \"\(.*\)\"$|\1|p" "$dir/tuples" | head -1)
  i=$((i + 1))
done
cat "$dir/tuples"
[ -n "$t" ] || bad "no tuple of ReadyNow: $(cat "$dir/tuples")"
echo "$t" | grep -q "^Process=P[0-9]* State=Ready from=[0-9]*$" || bad "tuple '$t' is not a process ready to run"
p=$(echo "$t" | sed 's/^Process=\([^ ]*\) .*$/\1/')
from=$(echo "$t" | sed 's/^.*from=//')
wait $tq || bad "the run: exit $?: $(cat "$dir/run.err")"
pids=""
n=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM ReadyNow WHERE Process = '$p' AND valid_from = $from")
[ -z "$t" ] || [ "$n" = 1 ] || bad "the tuple $t is not a row the run stored ($n rows)"
i=0
while [ $i -lt 300 ] && pminfo -h "$H" -f tqmon.result.valid 2>/dev/null | grep -q "\"$tq/"; do sleep 0.1; i=$((i + 1)); done
pminfo -h "$H" -f tqmon.result.valid 2>/dev/null | grep -q "\"$tq/" && bad "the results outlived their run"
exit $fails
