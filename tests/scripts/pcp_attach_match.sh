#!/bin/sh
# pcp_attach_match.sh - remote sensors give the answers of local ones
# (issue 19: "the results match the same programs monitored locally with
# --attach").  Two mailbox programs, a1's and a2's, run twice with the same
# arguments: first each under a tqmon of its own (--attach PID, entities
# P1), then each watched by the pmdatqmon agent of its "host" (a pmcd of
# the test's own on its own port) and answered by one tqmon through both
# pmcds (--pcp-sensors, entities a1:P1).  The queries (tests/pcp/match.tq:
# ResumedbyP1, and every send, wait and process state) are the same but
# for the one constant, P1, which the remote form qualifies with each host.
#
# A program on one processor (-k 1) does the same steps in the same order
# at every run of a seed (its log, numbers and samples aside, is checked to
# be the same: the precondition).  So each host's rows of the remote run,
# its "a1:" taken off every entity, must be the local run's rows, as
# temporal relations: the same tuples with their times replaced by their
# rank among all the times of that host's answers (the runs' clocks differ,
# their order may not).  The comparison fails on a row lost, added,
# renamed, or moved in time past another; a1's rows compared with a2's
# (another seed) must differ, so that it is seen to be able to.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
PCP_ACCESS="fetch, store"
pcpTest pcp_attach_match
A=maA$$
B=maB$$
cp build/mailbox/mailbox "$dir/$A"
cp build/mailbox/mailbox "$dir/$B"
ARGS="-k 1 -n 200 -u 1000 -w"
sed -n '/^-- "Which/q;p' examples/mailbox/monitor.tq >"$dir/decl.tq"
cp tests/pcp/match.tq "$dir/local.tq"
sed 's/S\.Process = P1$/(S.Process = "a1:P1" or S.Process = "a2:P1")/' tests/pcp/match.tq >"$dir/remote.tq"
[ "$(grep -c '(S.Process = "a1:P1" or S.Process = "a2:P1")' "$dir/remote.tq")" = 1 ] || { bad "match.tq: no constant P1 to qualify"; exit 1; }

# ---------------------------------------------------------------- local: one tqmon --attach a program
# (no agent runs yet: nothing else may take the programs)
"$dir/$A" $ARGS -s 1 -l "$dir/la.log" &
pa=$!
"$dir/$B" $ARGS -s 2 -l "$dir/lb.log" &
pb=$!
pids="$pa $pb"
for p in $pa $pb; do
  i=0
  while [ $i -lt 300 ] && [ ! -e /dev/shm/tqmon.$p ]; do sleep 0.05; i=$((i + 1)); done
done
$T run "$dir/decl.tq" "$dir/local.tq" --attach $pa --db "$dir/la.db" --quiet --stats "$dir/la.json" 2>"$dir/la.err" &
ta=$!
$T run "$dir/decl.tq" "$dir/local.tq" --attach $pb --db "$dir/lb.db" --quiet --stats "$dir/lb.json" 2>"$dir/lb.err" &
tb=$!
pids="$pids $ta $tb"
wait $ta || bad "local run of a1's program: exit $?: $(cat "$dir/la.err")"
wait $tb || bad "local run of a2's program: exit $?: $(cat "$dir/lb.err")"
wait $pa $pb
pids=""

# ---------------------------------------------------------------- remote: the agents, one tqmon --pcp-sensors
tqAgentStart a1 $A || exit 1
tqAgentStart a2 $B || exit 1
H1=127.0.0.1:$PORT_a1
H2=127.0.0.1:$PORT_a2
"$dir/$A" $ARGS -s 1 -l "$dir/ra.log" &
pa=$!
"$dir/$B" $ARGS -s 2 -l "$dir/rb.log" &
pb=$!
pids="$pa $pb"
tqAgentWaitRunning "$H1" $pa
tqAgentWaitRunning "$H2" $pb
$T run "$dir/decl.tq" "$dir/remote.tq" --pcp-sensors "$H1,$H2" --db "$dir/r.db" --quiet \
  --stats "$dir/r.json" 2>"$dir/r.err" || bad "remote run: exit $?: $(cat "$dir/r.err")"
wait $pa $pb
pids=""

# ---------------------------------------------------------------- the runs are whole
for f in la lb r; do
  grep -q "lost\|refused\|invalid\|incomplete" "$dir/$f.err" && bad "$f: $(cat "$dir/$f.err")"
  n=$(sqlite3 "$dir/$f.db" "SELECT count(*) FROM _tqmon_incomplete")
  [ "$n" = 0 ] || bad "$f: $n results said incomplete"
done
grep -q '"unmatched_ends": 0,' "$dir/r.json" || bad "remote: ends of tuples never begun: $(grep -o '"unmatched_ends": [0-9]*' "$dir/r.json")"
# the precondition: each program did the same steps at both runs
steps() { grep -q " EXIT$" "$1" || bad "$1: the program did not finish"; awk '$2 != "SAMPLE" { $1 = ""; print }' "$1"; }
for h in a b; do
  steps "$dir/l$h.log" >"$dir/l$h.steps"
  steps "$dir/r$h.log" >"$dir/r$h.steps"
  cmp -s "$dir/l$h.steps" "$dir/r$h.steps" || bad "program $h did not repeat its steps: $(diff "$dir/l$h.steps" "$dir/r$h.steps" | head -4)"
done
# and the local answers are those of the programs' logs (mailbox_live.sh's oracle)
awk -f tests/mailbox/resumed.awk "$dir/la.log" | sort >"$dir/la.expected"
sqlite3 "$dir/la.db" "SELECT Process FROM ResumedbyP1" | sort >"$dir/la.got"
[ -s "$dir/la.expected" ] || bad "a1's log has no process resumed by P1"
cmp -s "$dir/la.expected" "$dir/la.got" || bad "local ResumedbyP1 differs from a1's log: $(diff "$dir/la.expected" "$dir/la.got" | head -4)"

# ---------------------------------------------------------------- the answers as temporal relations
# rel(DB, PREFIX): every row of the four results whose process is PREFIX's,
# PREFIX taken off its entities, each time replaced by its rank among all
# the times of these rows (an event's time is its from, its to empty)
rel() {
  sqlite3 -separator ' ' "$1" "
    WITH r(rel, a, b, f, t) AS (
      SELECT 'ResumedbyP1', Process, '', valid_at, NULL FROM ResumedbyP1 WHERE substr(Process, 1, length('$2')) = '$2'
      UNION ALL SELECT 'Sends', Process, Mailbox, valid_at, NULL FROM Sends WHERE substr(Process, 1, length('$2')) = '$2'
      UNION ALL SELECT 'Waits', Process, Mailbox, valid_from, valid_to FROM Waits WHERE substr(Process, 1, length('$2')) = '$2'
      UNION ALL SELECT 'States', Process, State, valid_from, valid_to FROM States WHERE substr(Process, 1, length('$2')) = '$2'),
    x(v) AS (SELECT f FROM r UNION SELECT t FROM r WHERE t IS NOT NULL),
    k(v, n) AS (SELECT v, dense_rank() OVER (ORDER BY v) FROM x)
    SELECT (SELECT n FROM k WHERE v = f), coalesce((SELECT n FROM k WHERE v = t), '-'), rel,
           substr(a, length('$2') + 1),
           CASE WHEN rel IN ('Sends', 'Waits') AND substr(b, 1, length('$2')) = '$2' THEN substr(b, length('$2') + 1) ELSE b END
    FROM r ORDER BY 1, 2, 3, 4, 5"
}
rel "$dir/la.db" "" >"$dir/a1.local"
rel "$dir/lb.db" "" >"$dir/a2.local"
rel "$dir/r.db" a1: >"$dir/a1.remote"
rel "$dir/r.db" a2: >"$dir/a2.remote"
for h in a1 a2; do
  for rl in ResumedbyP1 Sends Waits States; do
    grep -q " $rl " "$dir/$h.local" || bad "$h: local $rl is empty"
  done
  [ "$(grep -c . "$dir/$h.remote")" = "$(grep -c . "$dir/$h.local")" ] ||
    bad "$h: $(grep -c . "$dir/$h.remote") rows through the agent, $(grep -c . "$dir/$h.local") attached"
  if cmp -s "$dir/$h.local" "$dir/$h.remote"; then
    echo "$h: $(grep -c . "$dir/$h.local") rows, the same through the agent and attached"
  else
    bad "$h: the answers through the agent differ from those attached (rank from, rank to, result, values): $(diff "$dir/$h.local" "$dir/$h.remote" | head -6)"
  fi
done
# remote entities are qualified and the mailboxes too: a row of one host
# never names the other's
sqlite3 "$dir/r.db" "SELECT count(*) FROM Sends WHERE substr(Process, 1, 3) <> substr(Mailbox, 1, 3) OR Process NOT LIKE 'a_:%'" | grep -qx 0 ||
  bad "remote Sends with an entity of another host or unqualified"
# the comparison can fail: another seed's answers are not these
cmp -s "$dir/a1.local" "$dir/a2.remote" && bad "a1's answers equal a2's: the comparison sees nothing"
exit $fails
