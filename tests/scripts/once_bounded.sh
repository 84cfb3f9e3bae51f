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
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
