#!/bin/sh
# stream.sh - results stream (issue 14.2): a live run writes each row as
# soon as the network decides it, flushed at every snapshot, so a reader of
# a pipe sees the first rows while the run still goes on (CSV, JSON lines
# and tables), and `tqmon run ... | grep` works live.  Then, as an oracle,
# every golden case streamed (--stream) stands for exactly the rows of its
# golden CSV (written sorted at the end): an interval's line without an
# end stands until a later line with its values and start follows.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/stream
rm -rf "$dir" && mkdir -p "$dir"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is missing"; exit 77; }
env --default-signal=INT true 2>/dev/null || { echo "skipped: env --default-signal (coreutils 8.31) is missing"; exit 77; }

sleep 600 >/dev/null 2>&1 &
sp=$!
trap 'kill $sp 2>/dev/null' EXIT
waitcomm $sp sleep || { echo "FAIL: sleep $sp did not start"; exit 1; }
printf 'clock 200ms;\nrange of S is ProcessState\nretrieve into St (S.State, S.Command) where S.Process = "%s"\n' $sp >"$dir/q.tq"

# live FORMAT PATTERN: a reader of the pipe gets a line matching PATTERN (a
# row of St) while tqmon still runs (it runs until interrupted: before
# rows streamed, none came); then ^C
# ends the run
live() {
  f=$dir/live.$1
  rm -f "$f.fifo" && mkfifo "$f.fifo"
  env --default-signal=INT $T run --host sensors/host.tq "$dir/q.tq" --format "$1" >"$f.fifo" 2>"$f.err" &
  tp=$!
  exec 3<"$f.fifo"
  # the reader stops at the first row
  timeout 120 sh -c 'while IFS= read -r l; do printf "%s\n" "$l"; case $l in '"$2"') exit 0;; esac; done; exit 1' <&3 >"$f.out"
  rrc=$?
  if kill -0 $tp 2>/dev/null; then alive=1; else alive=0; fi
  kill -INT $tp 2>/dev/null
  cat <&3 >>"$f.out" # the rest, until tqmon ends
  exec 3<&-
  wait $tp
  rc=$?
  [ $rrc -eq 0 ] || bad "$1: no row came: $(cat "$f.out") $(cat "$f.err")"
  [ $alive -eq 1 ] || bad "$1: the first row came only when the run had ended"
  [ $rc -eq 0 ] || bad "$1: exit $rc: $(cat "$f.err")"
  grep -q "Sanitizer\|runtime error" "$f.err" && bad "$1: sanitizer: $(cat "$f.err")"
}
live csv '*,sleep,[0-9]*'
live jsonl '*\"Command\":\"sleep\"*'
live table '*sleep*'

# the oracle: every golden case streamed
n=0
for tq in tests/golden/*.tq; do
  b=${tq%.tq}
  name=$(basename "$b")
  extra=""
  [ -f "$b.args" ] && extra=$(cat "$b.args")
  # shellcheck disable=SC2086
  $T run "$tq" --replay "$b.trace" --format csv --stream $extra >"$dir/$name.csv" 2>"$dir/$name.err" ||
    { bad "golden $name streamed: exit $?: $(head -3 "$dir/$name.err")"; continue; }
  python3 tests/stream_rows.py "$dir/$name.csv" >"$dir/$name.got"
  python3 tests/stream_rows.py "$b.csv" >"$dir/$name.want"
  cmp -s "$dir/$name.got" "$dir/$name.want" || bad "golden $name streamed: $(diff "$dir/$name.want" "$dir/$name.got" | head -5)"
  n=$((n + 1))
done
[ $n -gt 100 ] || bad "only $n golden cases"
[ $fails -eq 0 ] || exit 1
echo "ok: live rows stream (csv, jsonl, table); $n golden cases streamed agree with their sorted output"
