#!/bin/sh
# load_csv.sh - `tqmon load --csv DIR` (the export the DuckDB peer of make
# bench loads).  For every golden case: the CSV files of the text recording
# and of its collection file (tqmon record) hold the same rows, and those
# rows, imported into SQLite with the sqlite3 tool, are the tables `tqmon
# load --db` stores (row for row, NULLs included).  A string that needs
# quoting is quoted; a damaged collection file is refused with FILE:OFFSET.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/load_csv
rm -rf "$dir" && mkdir -p "$dir"
command -v sqlite3 > /dev/null 2>&1 || {
  echo "skipped: the sqlite3 tool is not installed"
  exit 77
}
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cases=0
for tq in tests/golden/*.tq; do
  n=${tq%.tq}
  name=$(basename "$n")
  extra=""
  [ -f "$n.args" ] && extra=$(cat "$n.args")
  d=$dir/$name
  # shellcheck disable=SC2086
  $T load $extra "$tq" --replay "$n.trace" --db "$d.db" 2> "$d.err" || {
    bad "$name: load --db"
    continue
  }
  # shellcheck disable=SC2086
  $T load $extra "$tq" --replay "$n.trace" --csv "$d.t" 2>> "$d.err" || bad "$name: load --csv (text)"
  # shellcheck disable=SC2086
  $T record $extra "$tq" --replay "$n.trace" -o "$d.col" 2>> "$d.err" || bad "$name: record"
  # shellcheck disable=SC2086
  $T load $extra "$tq" --replay "$d.col" --csv "$d.b" 2>> "$d.err" || bad "$name: load --csv (binary)"
  [ -f "$d.t/schema.csv" ] || {
    bad "$name: no schema.csv"
    continue
  }
  cases=$((cases + 1))
  # the tables of load --db, empty, in a new store; the CSV files into them
  sqlite3 "$d.db" .schema | grep -v _tqmon_meta > "$d.schema.sql"
  rm -f "$d.csv.db"
  sqlite3 "$d.csv.db" < "$d.schema.sql"
  for rel in $(sed 1d "$d.t/schema.csv" | cut -d, -f1 | uniq); do
    sed 1d "$d.t/$rel.csv" | sort > "$d.rows.t"
    sed 1d "$d.b/$rel.csv" | sort > "$d.rows.b"
    cmp -s "$d.rows.t" "$d.rows.b" || bad "$name: $rel: the CSV rows of the text and of the binary recording differ"
    sqlite3 "$d.csv.db" ".import --csv --skip 1 $d.t/$rel.csv $rel" 2>> "$d.err" || bad "$name: $rel: sqlite3 .import"
    if grep -q "^$rel,valid_to," "$d.t/schema.csv"; then
      sqlite3 "$d.csv.db" "UPDATE \"$rel\" SET valid_to = NULL WHERE valid_to = ''"
    fi
    diffs=$(sqlite3 "$d.csv.db" "ATTACH '$d.db' AS a;
      SELECT (SELECT count(*) FROM (SELECT * FROM main.\"$rel\" EXCEPT SELECT * FROM a.\"$rel\"))
           + (SELECT count(*) FROM (SELECT * FROM a.\"$rel\" EXCEPT SELECT * FROM main.\"$rel\"))
           + abs((SELECT count(*) FROM main.\"$rel\") - (SELECT count(*) FROM a.\"$rel\"))")
    [ "$diffs" = 0 ] || bad "$name: $rel: the CSV rows differ from the SQLite tables of load --db ($diffs)"
  done
done
[ "$cases" -gt 50 ] || bad "only $cases golden cases were loaded"

# quoting: entity names and strings with a comma, a quote, nothing
cat > "$dir/q.tq" << 'EOF'
entity Node;
event Note (Node: Node initiator, Text: string) traced on initiator;
EOF
cat > "$dir/q.trace" << 'EOF'
1s Node+ "a,b"
2s Note "a,b" "say \"hi\""
3s Note "a,b" ""
EOF
$T load "$dir/q.tq" --replay "$dir/q.trace" --csv "$dir/q" 2> "$dir/q.err" || bad "quoting: load --csv"
printf '%s\n' 'Node,Text,valid_at' '"a,b","say ""hi""",2000000000' '"a,b","",3000000000' > "$dir/q.want"
cmp -s "$dir/q.want" "$dir/q/Note.csv" || bad "quoting: Note.csv is $(cat "$dir/q/Note.csv")"

# a damaged collection file: FILE:OFFSET, exit 1
tq=tests/golden/paper_example.tq
$T record examples/paper/paper.tq --replay examples/paper/paper.trace -o "$dir/p.col" 2> /dev/null || bad "record the paper"
size=$(wc -c < "$dir/p.col")
head -c $((size - 3)) "$dir/p.col" > "$dir/cut.col"
$T load examples/paper/paper.tq --replay "$dir/cut.col" --csv "$dir/cut" > /dev/null 2> "$dir/cut.err"
rc=$?
[ $rc = 1 ] || bad "a truncated collection file: exit $rc, not 1"
grep -q "cut.col:[0-9]*: error: truncated" "$dir/cut.err" || bad "a truncated collection file: $(cat "$dir/cut.err")"
[ -e "$tq" ] || bad "$tq is missing"
[ $fails = 0 ] && echo "load --csv: $cases golden cases, text = binary = load --db"
exit $((fails > 0))
