#!/bin/sh
# sf_shm.sh - rule SF live (docs/enabling.md): the mailbox program's
# SendMessage sensor is flagged on its initiator; a query on its target
# (S.Mailbox = M7) has the sensor check the mailbox before writing.  The
# program's own log is the independent observation: packets written are
# its sends to M7, packets suppressed its other sends, and the answer is
# the one of the previous optimizer (--no-rule SF), which writes them all.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/sf_shm.$$
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
[ -x $MB ] || { echo "skipped: $MB not built"; exit 77; }
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
jsensor() { grep "\"name\": \"$2\"" "$1" | sed "s/.*\"$3\": \([0-9]*\).*/\1/"; }

for mode in sf nosf; do
  opt=""
  [ $mode = nosf ] && opt="--no-rule SF"
  # shellcheck disable=SC2086
  $T run tests/mailbox/sf.tq $opt --db "$dir/$mode.db" --quiet --stats "$dir/$mode.json" \
    --exec $MB -m 8 -n 120 -u 300 -w -l "$dir/$mode.log" 2>"$dir/$mode.err" || bad "$mode: exit $?: $(cat "$dir/$mode.err")"
  sends=$(awk '$2 == "SEND"' "$dir/$mode.log" | wc -l | tr -d ' ')
  to7=$(awk '$2 == "SEND" && $4 == "M7"' "$dir/$mode.log" | wc -l | tr -d ' ')
  [ "$to7" -gt 0 ] || bad "$mode: the program sent nothing to M7"
  awk '$2 == "SEND" && $4 == "M7" { print $3 }' "$dir/$mode.log" | sort | uniq -c >"$dir/$mode.expected"
  sqlite3 "$dir/$mode.db" "SELECT Process FROM ToM7" | sort | uniq -c >"$dir/$mode.got"
  # answers are sets: one row per distinct (process, time); the log's sends
  # each have their own time
  diff "$dir/$mode.expected" "$dir/$mode.got" >"$dir/$mode.diff" || bad "$mode: ToM7 differs from the log: $(cat "$dir/$mode.diff")"
  rec=$(jsensor "$dir/$mode.json" SendMessage recorded)
  if [ $mode = sf ]; then
    grep -q '"filter": "S.Mailbox=M7"' "$dir/$mode.json" || bad "sf: --stats shows no filter on SendMessage"
    sup=$(jsensor "$dir/$mode.json" SendMessage suppressed)
    [ "$rec" = "$to7" ] || bad "sf: $rec packets written, the program sent $to7 to M7"
    [ "$sup" = $((sends - to7)) ] || bad "sf: $sup packets suppressed, the program sent $((sends - to7)) elsewhere"
  else
    grep -q '"filter"' "$dir/$mode.json" && bad "nosf: a filter without the rule"
    [ "$rec" = "$sends" ] || bad "nosf: $rec packets written, the program sent $sends"
  fi
  grep -q "lost" "$dir/$mode.err" && bad "$mode: packets lost: $(cat "$dir/$mode.err")"
done
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
