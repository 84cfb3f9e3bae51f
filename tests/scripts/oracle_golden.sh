#!/bin/sh
# oracle_golden.sh - every golden case answered a second, independent way:
# the recording stored in SQLite (tqmon load) and each query translated into
# SQL (tqmon sql) must give the expected rows (order aside).  A case with a
# NAME.nooracle file (saying why) is skipped: delta relations exist only
# while a run samples, a store holds none.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
fails=0
for tq in tests/golden/*.tq; do
  n=${tq%.tq}
  name=$(basename "$n")
  [ -f "$n.nooracle" ] && continue
  extra=""
  [ -f "$n.args" ] && extra=$(cat "$n.args")
  db=$OUT/oracle-$name.db
  rm -f "$db" "$db-wal" "$db-shm"
  # shellcheck disable=SC2086
  $T load "$tq" $extra --replay "$n.trace" --db "$db"
  # shellcheck disable=SC2086
  $T sql "$tq" $extra --db "$db" | sort >"$OUT/oracle-$name.csv"
  # (the periods a golden answer may be incomplete over, "# incomplete"
  # lines, come from its recording's losses: the rows are what SQL answers)
  if ! grep -v '^# incomplete ' "$n.csv" | sort | diff - "$OUT/oracle-$name.csv" >"$OUT/oracle-$name.diff"; then
    echo "oracle disagrees on $name:"
    cat "$OUT/oracle-$name.diff"
    fails=$((fails + 1))
  fi
done
[ $fails -eq 0 ]
