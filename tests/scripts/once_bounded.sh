#!/bin/sh
# once_bounded.sh - the check of a relation declared once (rule O3-ONCE,
# docs/enabling.md) holds memory by entity id, not a map entry per entity
# ever seen: a long recording of 100,000 short-lived mailboxes, each sent to
# by P1 and deleted once, and M1 created and deleted a second time at the
# end (the reuse the check must still see, tests/o3).  --stats gives the
# bytes the check holds (once_bytes): at most a bit per entity id, where a
# map took 16 bytes a slot (4 MiB here); the answer is every deletion.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/once_bounded.$$
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
N=100000
G=tests/golden/o3_once.tq
awk -v n=$N 'BEGIN {
  print "0:00:00 Process+ P1"
  for (i = 1; i <= n; i++) {
    t = 10 + 4 * i
    printf "%d:%02d:%02d Mailbox+ M%d\n", t / 3600, (t / 60) % 60, t % 60, i
    t++; printf "%d:%02d:%02d SendMessage P1 M%d\n", t / 3600, (t / 60) % 60, t % 60, i
    t++; printf "%d:%02d:%02d Deleted M%d P1\n", t / 3600, (t / 60) % 60, t % 60, i
    t++; printf "%d:%02d:%02d Mailbox- M%d\n", t / 3600, (t / 60) % 60, t % 60, i
  }
  t = 10 + 4 * (n + 1)
  printf "%d:%02d:%02d Mailbox+ M1\n", t / 3600, (t / 60) % 60, t % 60
  t++; printf "%d:%02d:%02d Deleted M1 P1\n", t / 3600, (t / 60) % 60, t % 60
  t++; printf "%d:%02d:%02d Mailbox- M1\n", t / 3600, (t / 60) % 60, t % 60
}' >"$dir/long.trace"
$T run $G --replay "$dir/long.trace" --format csv --stats "$dir/s.json" >"$dir/out.csv" 2>"$dir/err" || bad "run: exit $?"
field() { grep "\"name\": \"$1\"" "$dir/s.json" | sed -n "s/.*\"$2\": \\([a-z0-9]*\\).*/\\1/p"; }
rows=$(grep -c '^M[0-9]' "$dir/out.csv")
[ "$rows" = $N ] || bad "$rows deletions after a send, expected $N"
[ "$(field Deleted twice)" = 1 ] || bad "Deleted: twice '$(field Deleted twice)', expected 1 (M1 deleted again)"
grep -q "warning: 1 tuples of Deleted came on a flag entity that had one already" "$dir/err" || bad "no warning: $(cat "$dir/err")"
b=$(field Deleted once_bytes)
[ -n "$b" ] || bad "--stats gives no once_bytes for Deleted"
# a bit per symbol id (the recording interns about N names), with room to grow
[ -n "$b" ] && [ "$b" -le $((N / 2)) ] && echo "once_bytes: $b for $N entities" || bad "the once check holds $b bytes for $N entities"
# flag values past the symbols, from a PM that gives raw numbers (the test
# reader, tests/testpm/sources.c): the check keeps them in its map, not a
# bit array as large as the value (256 MiB for 2,000,000,000 before)
if [ -e build/testpm/reader.so ]; then
  printf '3600|b|Process|1|@P1\n3600|b|Mailbox|2|@M1\n3700|e|Deleted|3|#2000000000|@P1\n3800|e|Deleted|4|#2000000000|@P1\n' \
    >"$dir/raw.rec"
  $T run $G --pm-path build/testpm --pm reader=file="$dir/raw.rec" --format csv --stats "$dir/s.json" >/dev/null 2>"$dir/raw.err" ||
    bad "raw values: exit $?: $(cat "$dir/raw.err")"
  b=$(field Deleted once_bytes)
  [ -n "$b" ] && [ "$b" -le 65536 ] || bad "raw values: the once check holds '$b' bytes for one flag value"
  [ "$(field Deleted twice)" = 1 ] || bad "raw values: twice '$(field Deleted twice)', expected 1"
else
  bad "build/testpm/reader.so is not built (make build/testpm/reader.so)"
fi
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
