#!/bin/sh
# load_losses.sh - tqmon load of a recording that holds losses (loss lines,
# docs/losses.md): the tables of the primitive relations miss those
# records, so the store keeps the losses in _tqmon_lost and the load says
# so on standard error, from a text recording and from the same recording
# converted to a binary one.  A recording without losses makes no table.
# A load into a store that holds an earlier load replaces its losses as it
# replaces its tables (they were kept, and added to), also a table of an
# older tqmon's whose lost could not be NULL (a count not known).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/load_losses
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
G=tests/golden/loss_lines
$T convert $G.tq $G.trace "$dir/rec.col" 2>"$dir/convert.err" || bad "convert: $(cat "$dir/convert.err")"
printf 'Send|P1|20|25|3|0\nWaiting|M1|40|42|1|1\n||50|50|2|0\nMailbox|M9|53|54|1|0\n' >"$dir/expected"
for rec in $G.trace "$dir/rec.col"; do
  db="$dir/$(basename "$rec").db"
  $T load $G.tq --replay "$rec" --db "$db" >"$dir/load.out" 2>"$dir/load.err" || bad "load $rec: exit $?: $(cat "$dir/load.err")"
  grep -q "warning: the recording says 7 packets were lost (4 losses): the tables miss them; their periods are in _tqmon_lost" \
    "$dir/load.err" || bad "load $rec: no warning of the losses: $(cat "$dir/load.err")"
  sqlite3 "$db" "SELECT relation, entity, valid_from, valid_to, lost, spans FROM _tqmon_lost ORDER BY rowid" >"$dir/got" 2>&1
  cmp -s "$dir/expected" "$dir/got" || bad "load $rec: _tqmon_lost: $(diff "$dir/expected" "$dir/got")"
done
# loaded again into the same store: the same losses, not twice (from
# both recordings: the binary one's over the text one's)
for rec in $G.trace "$dir/rec.col"; do
  $T load $G.tq --replay "$rec" --db "$dir/again.db" >"$dir/load.out" 2>"$dir/load.err" || bad "load again $rec: exit $?: $(cat "$dir/load.err")"
  sqlite3 "$dir/again.db" "SELECT relation, entity, valid_from, valid_to, lost, spans FROM _tqmon_lost ORDER BY rowid" >"$dir/got" 2>&1
  cmp -s "$dir/expected" "$dir/got" || bad "load again $rec: _tqmon_lost: $(diff "$dir/expected" "$dir/got")"
done
# a count not known into a store whose _tqmon_lost an older tqmon made
# (lost NOT NULL)
U=tests/golden/loss_unknown
sqlite3 "$dir/old.db" "CREATE TABLE _tqmon_lost (relation TEXT, entity TEXT, valid_from INTEGER NOT NULL, valid_to INTEGER NOT NULL, lost INTEGER NOT NULL, spans INTEGER NOT NULL); INSERT INTO _tqmon_lost VALUES ('Send', 'P9', 1, 2, 5, 0)"
$T load $U.tq --replay $U.trace --db "$dir/old.db" >"$dir/load.out" 2>"$dir/load.err" || bad "load into an older store: exit $?: $(cat "$dir/load.err")"
[ "$(sqlite3 "$dir/old.db" "SELECT relation, ifnull(lost, 'NULL') FROM _tqmon_lost ORDER BY rowid" | tr '\n' ' ')" = "Send|NULL Send|2 Waiting|NULL " ] ||
  bad "load into an older store: _tqmon_lost holds $(sqlite3 "$dir/old.db" "SELECT * FROM _tqmon_lost" | tr '\n' ' ')"
# no losses, no table and no warning
$T load examples/paper/paper.tq --replay examples/paper/paper.trace --db "$dir/paper.db" 2>"$dir/paper.err" ||
  bad "load of the paper's example: $(cat "$dir/paper.err")"
grep -q "lost" "$dir/paper.err" && bad "a recording without losses: $(cat "$dir/paper.err")"
[ "$(sqlite3 "$dir/paper.db" "SELECT count(*) FROM sqlite_master WHERE name = '_tqmon_lost'")" = 0 ] ||
  bad "a recording without losses made a _tqmon_lost table"
# nor keeps the losses of one loaded before into the store
$T load examples/paper/paper.tq --replay examples/paper/paper.trace --db "$dir/again.db" 2>"$dir/paper.err" ||
  bad "load of the paper's example over another: $(cat "$dir/paper.err")"
[ "$(sqlite3 "$dir/again.db" "SELECT count(*) FROM sqlite_master WHERE name = '_tqmon_lost'")" = 0 ] ||
  bad "a recording without losses, loaded over one with, kept its _tqmon_lost"
[ $fails -eq 0 ] && echo ok
exit $fails
