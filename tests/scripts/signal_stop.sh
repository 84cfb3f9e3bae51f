#!/bin/sh
# signal_stop.sh - SIGINT, SIGTERM and SIGHUP finish a run cleanly (issues
# 14.1, 15.7): a real signal to a real run, live (--host, --exec) and a
# long replay; the run completes its snapshot, prints and stores what the
# queries decided, leaves open intervals open and exits 0, and the store
# passes SQLite's integrity check with the rows the output shows.  A second
# signal aborts at once.
#
# A background job of a shell script starts with SIGINT ignored (POSIX), and
# tqmon keeps an ignored signal ignored (nohup): the runs are started with
# `env --default-signal` so that they get SIGINT as from a terminal.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/signal_stop
rm -rf "$dir" && mkdir -p "$dir"
env --default-signal=INT true 2>/dev/null || { echo "skipped: env --default-signal (coreutils 8.31) is missing"; exit 77; }
RUN="env --default-signal=INT,HUP,TERM"

# waitrows PID DB SQL N: waits until the count SQL gives in DB reaches N
# while process PID runs (the store commits as the run goes); 1 after 120 s
# or when PID ended.
waitrows() {
  i=0
  while [ $i -lt 1200 ]; do
    kill -0 "$1" 2>/dev/null || return 1
    n=$(sqlite3 "$2" "$3" 2>/dev/null)
    [ -n "$n" ] && [ "$n" -ge "$4" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# stored DB TABLE: its rows, as CSV without header, sorted
stored() { sqlite3 -csv "$1" "SELECT * FROM \"$2\"" | sort; }
# printed OUT.csv NAME: the rows of result NAME printed, sorted
printed() { section "$1" "$2" | sort; }
# checkstore NAME DB: integrity
checkstore() {
  [ "$(sqlite3 "$2" 'pragma integrity_check')" = ok ] || bad "$1: the store fails its integrity check"
}

# ---------------------------------------------------------------- live: --host
sleep 600 >/dev/null 2>&1 &
sp=$!
trap 'kill $sp 2>/dev/null' EXIT
waitcomm $sp sleep || { echo "FAIL: sleep $sp did not start"; exit 1; }
cat >"$dir/host.tq" <<EOF
clock 200ms;
range of S is ProcessState
retrieve into St (S.State, S.Command) where S.Process = "$sp"
range of P is Process
retrieve into Pr (P.Process, P.Command) where P.Process = "$sp"
EOF
for sig in INT TERM HUP; do
  d=$dir/host.$sig
  $RUN $T run --host sensors/host.tq "$dir/host.tq" --db "$d.db" --format csv --stats "$d.json" >"$d.csv" 2>"$d.err" &
  tp=$!
  waitrows $tp "$d.db" "SELECT count(*) FROM St" 3 || bad "host $sig: no rows stored while it ran: $(cat "$d.err")"
  kill -$sig $tp
  wait $tp
  rc=$?
  [ $rc -eq 0 ] || bad "host $sig: exit $rc (expected 0): $(cat "$d.err")"
  grep -q "^tqmon: SIG$sig: the run ended there" "$d.err" || bad "host $sig: no word of the signal: $(cat "$d.err")"
  checkstore "host $sig" "$d.db"
  [ "$(printed "$d.csv" St | wc -l)" -ge 3 ] || bad "host $sig: $(printed "$d.csv" St | wc -l) rows of St printed"
  printed "$d.csv" St >"$d.printed"
  stored "$d.db" St >"$d.stored"
  cmp -s "$d.printed" "$d.stored" || bad "host $sig: the rows printed and stored differ: $(diff "$d.printed" "$d.stored" | head -5)"
  # the sleep still runs: its Process interval is left open
  [ "$(printed "$d.csv" Pr | cut -d, -f1-2,4)" = "$sp,sleep," ] || bad "host $sig: Pr printed: $(printed "$d.csv" Pr)"
  [ "$(sqlite3 "$d.db" "SELECT count(*) FROM Pr WHERE valid_to IS NULL")" = 1 ] || bad "host $sig: Pr not open in the store"
  grep -q "\"halted_by\": \"SIG$sig\"" "$d.json" || bad "host $sig: --stats has no halted_by"
  grep -q "Sanitizer\|runtime error" "$d.err" && bad "host $sig: sanitizer: $(cat "$d.err")"
done

# SIGKILL: no handler can run; the store holds what was committed (by
# snapshot and by time), intact (how much is lost: below, on a replay)
d=$dir/host.KILL
$T run --host sensors/host.tq "$dir/host.tq" --db "$d.db" --quiet 2>"$d.err" &
tp=$!
waitrows $tp "$d.db" "SELECT count(*) FROM St" 3 || bad "host KILL: no rows stored while it ran: $(cat "$d.err")"
kill -KILL $tp
{ wait $tp; } 2>/dev/null
checkstore "host KILL" "$d.db"
[ "$(sqlite3 "$d.db" "SELECT count(*) FROM St")" -ge 3 ] || bad "host KILL: rows committed before the kill were lost"

# ---------------------------------------------------------------- live: --exec
# the monitor alone is interrupted: it ends the subject, and stores what the
# subject did until then
MB=build/mailbox/mailbox
d=$dir/exec
$RUN $T run examples/mailbox/monitor.tq --db "$d.db" --format csv \
  --exec $MB -n 1000000 -u 2000 -w -l "$d.log" >"$d.csv" 2>"$d.err" &
tp=$!
waitrows $tp "$d.db" "SELECT count(*) FROM RunningOnEvery10Ticks" 3 || bad "exec: no rows stored while it ran: $(cat "$d.err")"
sub=$(ps -o pid= --ppid $tp | tr -d ' ' | head -1)
kill -INT $tp
wait $tp
rc=$?
[ $rc -eq 0 ] || bad "exec: exit $rc (expected 0): $(cat "$d.err")"
grep -q "^tqmon: SIGINT: the run ended there" "$d.err" || bad "exec: no word of the signal: $(cat "$d.err")"
checkstore exec "$d.db"
[ -n "$sub" ] && kill -0 "$sub" 2>/dev/null && bad "exec: the subject $sub still runs after the monitor ended"
for rel in RunningOnEvery10Ticks ResumedbyP1; do
  printed "$d.csv" $rel >"$d.$rel.printed"
  stored "$d.db" $rel >"$d.$rel.stored"
  cmp -s "$d.$rel.printed" "$d.$rel.stored" || bad "exec: $rel printed and stored differ"
done
[ -s "$d.RunningOnEvery10Ticks.stored" ] || bad "exec: RunningOnEvery10Ticks is empty"
# what was stored is what the subject did (its log, up to its end)
awk -f tests/mailbox/resumed.awk "$d.log" | sort -u >"$d.resumed.log"
cut -d, -f1 "$d.ResumedbyP1.stored" | sort -u >"$d.resumed.got"
[ -z "$(comm -13 "$d.resumed.log" "$d.resumed.got")" ] || bad "exec: ResumedbyP1 rows the subject never logged"
grep -q "Sanitizer\|runtime error" "$d.err" && bad "exec: sanitizer: $(cat "$d.err")"

# ^C at a terminal: the whole process group (the monitor and its subject)
d=$dir/group
setsid $RUN $T run examples/mailbox/monitor.tq --db "$d.db" --quiet \
  --exec $MB -n 1000000 -u 2000 -w -l "$d.log" 2>"$d.err" &
tp=$!
waitrows $tp "$d.db" "SELECT count(*) FROM RunningOnEvery10Ticks" 3 || bad "group: no rows stored while it ran: $(cat "$d.err")"
kill -INT -- -$tp 2>/dev/null || kill -INT $tp
wait $tp
rc=$?
[ $rc -eq 0 ] || bad "group: exit $rc (expected 0): $(cat "$d.err")"
checkstore group "$d.db"
[ "$(sqlite3 "$d.db" "SELECT count(*) FROM RunningOnEvery10Ticks")" -ge 3 ] || bad "group: rows lost"
grep -q "Sanitizer\|runtime error" "$d.err" && bad "group: sanitizer: $(cat "$d.err")"

# ---------------------------------------------------------------- a long replay
# the paper's example drawn at 0.05 s a step (661 steps): interrupted after
# its first rows, it ends early with what it decided, and exits 0
P=examples/paper
d=$dir/replay
$T run $P/paper.tq $P/queries.tq --replay $P/paper.trace --format csv >"$d.full.csv" 2>"$d.full.err" ||
  bad "replay: the whole run failed: $(cat "$d.full.err")"
full=$(printed "$d.full.csv" RunningOnEvery10Seconds | wc -l)
$RUN $T run $P/paper.tq $P/queries.tq $P/display.tq --replay $P/paper.trace --db "$d.db" --format csv \
  --display list="$d.list" --display pace=0.05 >"$d.csv" 2>"$d.err" &
tp=$!
waitrows $tp "$d.db" "SELECT count(*) FROM RunningOnEvery10Seconds" 5 || bad "replay: no rows stored while it ran: $(cat "$d.err")"
kill -INT $tp
wait $tp
rc=$?
[ $rc -eq 0 ] || bad "replay: exit $rc (expected 0): $(cat "$d.err")"
grep -q "^tqmon: SIGINT: the run ended there" "$d.err" || bad "replay: no word of the signal: $(cat "$d.err")"
checkstore replay "$d.db"
printed "$d.csv" RunningOnEvery10Seconds >"$d.printed"
stored "$d.db" RunningOnEvery10Seconds >"$d.stored"
cmp -s "$d.printed" "$d.stored" || bad "replay: the rows printed and stored differ"
n=$(wc -l <"$d.stored")
{ [ "$n" -ge 5 ] && [ "$n" -lt "$full" ]; } || bad "replay: $n rows of $full: not stopped early"
# what it decided is what the whole run decided up to there
sort "$d.stored" >"$d.stored.s"
printed "$d.full.csv" RunningOnEvery10Seconds >"$d.full.s"
[ -z "$(comm -23 "$d.stored.s" "$d.full.s")" ] || bad "replay: rows the whole run does not have"

# ---------------------------------------------------------------- SIGKILL loses at most the last second
# No handler runs on SIGKILL: the store keeps what it committed, and it
# commits at least every half second of wall time while rows come
# (runtime/store.c), so a killed run loses at most about its last second.
# Measured on the paper's example replayed at 0.05 s a step, its rows
# streamed: the reader stamps each line with the time it read it, and the
# run is killed 12 s after its first row.  Every row it printed more than
# 1 s + MARGIN before the kill must be in the store; MARGIN (4 s) is for a
# slow machine (the stamping reader and the pipe lag behind the run, and a
# commit may wait for the next instant, at most a step).  Every row stored
# is one the uninterrupted run stores too (an interval still open when the
# run was killed is stored open: its line without an end).
MARGIN=4
d=$dir/kill9
$T run $P/paper.tq $P/queries.tq --replay $P/paper.trace --db "$d.full.db" --quiet 2>"$d.full.err" ||
  bad "kill -9: the whole run failed: $(cat "$d.full.err")"
rm -f "$d.fifo" && mkfifo "$d.fifo"
$T run $P/paper.tq $P/queries.tq $P/display.tq --replay $P/paper.trace --db "$d.db" --format csv --stream \
  --display list=/dev/null --display pace=0.05 >"$d.fifo" 2>"$d.err" &
tp=$!
while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done <"$d.fifo" >"$d.out" &
rp=$!
i=0
# (the reader may not have made $d.out yet: read through cat, grep counts 0)
until [ "$(cat "$d.out" 2>/dev/null | grep -c ' [^#]*,[0-9][0-9]*$')" -gt 0 ] || [ $i -ge 1200 ] || ! kill -0 $tp 2>/dev/null; do
  sleep 0.1
  i=$((i + 1))
done
sleep 12
if kill -KILL $tp 2>/dev/null; then
  killed=$(date +%s.%N)
  { wait $tp; } 2>/dev/null
  wait $rp
  checkstore "kill -9" "$d.db"
  # the rows printed before the cutoff, as "Result|row"
  awk -v killed="$killed" -v margin=$MARGIN '
    BEGIN { cut = killed - 1 - margin }
    { t = $1; sub(/^[^ ]* /, "") }
    /^# incomplete / { next }
    /^# / { res = substr($0, 3); hdr = 1; next }
    hdr { hdr = 0; next }
    t + 0 < cut && res != "" { print res "|" $0 }' "$d.out" | sort -u >"$d.before"
  # the rows stored by the killed run and by the whole run, as "Result|row"
  for db in "$d.db" "$d.full.db"; do
    for r in RunningOnEvery10Seconds ResumedbyP1; do stored "$db" $r | sed "s/^/$r|/"; done | sort -u >"$db.rows"
  done
  n=$(wc -l <"$d.before")
  [ "$n" -ge 10 ] || bad "kill -9: only $n rows printed more than $((1 + MARGIN)) s before the kill: $(cat "$d.err")"
  # prefix FILE: each line of stdin that is no line of FILE (an open
  # interval's line, ending in a comma, may be the start of one)
  missing() {
    awk -v f="$1" 'BEGIN { while ((getline l <f) > 0) { have[l] = 1; if (l ~ /,[0-9]+$/) { p = l; sub(/[0-9]+$/, "", p); have[p] = 1 } } }
      !($0 in have)'
  }
  lost=$(missing "$d.db.rows" <"$d.before" | wc -l)
  [ "$lost" -eq 0 ] || bad "kill -9: $lost of the $n rows printed more than $((1 + MARGIN)) s before the kill are not in the store: $(missing "$d.db.rows" <"$d.before" | head -3)"
  [ -z "$(missing "$d.full.db.rows" <"$d.db.rows")" ] ||
    bad "kill -9: rows stored that the whole run does not store: $(missing "$d.full.db.rows" <"$d.db.rows" | head -3)"
  [ "$(wc -l <"$d.db.rows")" -lt "$(wc -l <"$d.full.db.rows")" ] || bad "kill -9: the run was not cut short"
else
  wait $rp
  bad "kill -9: the run ended within 12 s of its first row: $(cat "$d.err")"
fi

# ---------------------------------------------------------------- a second signal aborts
# a step drawn for 30 s: the first SIGINT waits for it, the second kills
d=$dir/twice
$RUN $T run $P/paper.tq $P/queries.tq $P/display.tq --replay $P/paper.trace --db "$d.db" --quiet \
  --display list=/dev/null --display pace=30 2>"$d.err" &
tp=$!
waitrows $tp "$d.db" "SELECT count(*) FROM sqlite_master" 1 || bad "twice: the run did not start: $(cat "$d.err")"
kill -INT $tp
sleep 1
kill -0 $tp 2>/dev/null || bad "twice: the first SIGINT killed the run"
kill -INT $tp
wait $tp
rc=$?
[ $rc -eq 130 ] || bad "twice: exit $rc (expected 130: killed by the second SIGINT)"
checkstore twice "$d.db"

[ $fails -eq 0 ] || exit 1
echo "ok: SIGINT, SIGTERM and SIGHUP end live runs and a replay cleanly; a second SIGINT aborts"
