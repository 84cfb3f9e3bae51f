#!/bin/sh
# entity_state.sh - a generated entity's change of state is one instant
# (tqs_entity_state): its tuple ends when the next one begins, so the entity
# is in its relation all along.  The mailbox program's 8 processes change
# state hundreds of times; the count of processes must rise to 8 once and
# never dip while they live (with two time stamps it dipped to 7 at every
# change of state: 329 rows of 7 and 329 of 8 in a run of 50 steps).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/entity_state
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
sed -n '/^-- "Which/q;p' examples/mailbox/monitor.tq >"$dir/decl.tq"
$T run "$dir/decl.tq" tests/mailbox/alive.tq --db "$dir/run.db" --quiet \
  --exec build/mailbox/mailbox -k 1 -n 50 -u 1000 -l "$dir/mb.log" 2>"$dir/run.err" || bad "the run: exit $?: $(cat "$dir/run.err")"
changes=$(awk '$2 == "WAIT" || $2 == "WAKE"' "$dir/mb.log" | wc -l)
[ "$changes" -gt 10 ] || bad "the program changed few states ($changes waits and wakes)"
sqlite3 "$dir/run.db" "SELECT N FROM Alive ORDER BY valid_from" >"$dir/counts"
[ "$(grep -cx 8 "$dir/counts")" = 1 ] ||
  bad "the count of processes reached 8 $(grep -cx 8 "$dir/counts") times: it dipped at a change of state ($(sort "$dir/counts" | uniq -c | tr '\n' ' '))"
exit $fails
