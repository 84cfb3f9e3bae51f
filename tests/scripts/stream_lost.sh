#!/bin/sh
# stream_lost.sh - never silent, streamed: output streamed as it is
# decided (--stream: CSV, JSON lines, tables) says when an answer may be
# incomplete as soon as the loss is known, not only at the end
# (docs/losses.md, "What a user sees").  The run asks, as a user who may
# not read /proc/1/io, for the I/O of process 1 (every sample lost) and
# for its state (whole): each format carries a period of OneIo that grows
# with the losses, the first one before the state's second row; OneState
# gets none.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-stream_lost.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 777 "$dir"
AS=""
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "skipped: no setpriv to run as another user than root"; exit 77; }
  AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
  $AS test -x "$T" || { echo "skipped: $T is not reachable by uid 65534"; exit 77; }
fi
if $AS cat /proc/1/io >/dev/null 2>&1; then
  echo "skipped: /proc/1/io is readable here (process 1 is this user's)"
  exit 77
fi
cat >"$dir/q.tq" <<'EOF'
range of I is Io
retrieve into OneIo (I.ReadBytes) where I.Process = "1"
range of S is ProcessState
retrieve into OneState (S.State) where S.Process = "1"
EOF
N=3
for f in csv jsonl table; do
  $AS $T run --host sensors/host.tq "$dir/q.tq" --snapshots $N --format $f --stream >"$dir/$f.out" 2>"$dir/$f.err" ||
    bad "$f: exit $?: $(cat "$dir/$f.err")"
done
# the line of the first loss, and of the state's second row
first() { grep -n "$2" "$dir/$1.out" | head -1 | cut -d: -f1; }
second() { grep -n "$2" "$dir/$1.out" | sed -n 2p | cut -d: -f1; }
c1=$(first csv '^# incomplete from .*: 1 packet of Io lost on 1$')
c2=$(second csv '^Sleeping,')
[ -n "$c1" ] && [ -n "$c2" ] && [ "$c1" -lt "$c2" ] || bad "csv: no loss line of OneIo before the state's second row: $(cat "$dir/csv.out")"
grep -q "^# incomplete from .*: $N packets of Io lost on 1$" "$dir/csv.out" || bad "csv: the period did not grow to $N packets"
# (a loss line is in its result's block: the block header just before it)
awk '/^# incomplete/ && prev != "ReadBytes,valid_at" { bad = 1 } { prev = $0 } END { exit bad }' "$dir/csv.out" ||
  bad "csv: a loss line outside OneIo's block"
j1=$(first jsonl '^{"incomplete":{"result":"OneIo","relation":"Io","entity":"1",.*"lost":1}}$')
j2=$(second jsonl '"relation":"OneState"')
[ -n "$j1" ] && [ -n "$j2" ] && [ "$j1" -lt "$j2" ] || bad "jsonl: no loss record of OneIo before the state's second row: $(cat "$dir/jsonl.out")"
grep -q "^{\"incomplete\":{\"result\":\"OneIo\",.*\"lost\":$N}}$" "$dir/jsonl.out" || bad "jsonl: the period did not grow to $N"
grep -q '"result":"OneState"' "$dir/jsonl.out" && bad "jsonl: OneState said to be incomplete"
python3 -c 'import json, sys
for l in open(sys.argv[1]): json.loads(l)' "$dir/jsonl.out" || bad "jsonl: a line that is not JSON"
t1=$(first table '^! OneIo may be incomplete from .*: 1 packet of Io lost on 1$')
t2=$(second table '^Sleeping ')
[ -n "$t1" ] && [ -n "$t2" ] && [ "$t1" -lt "$t2" ] || bad "table: no loss line of OneIo before the state's second row: $(cat "$dir/table.out")"
grep -q "OneState may be incomplete" "$dir/csv.out" "$dir/table.out" && bad "OneState said to be incomplete"
[ $fails -eq 0 ]
