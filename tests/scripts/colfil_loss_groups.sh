#!/bin/sh
# colfil_loss_groups.sh - a collection file's losses are bounded per group
# like its records: a recorder told many losses while few records come
# writes them out in groups of their own (format 4: a group of losses
# only) as their bytes reach the group size, instead of holding them all
# in one directory until the next record or the close (memory without
# bound, and past 64 MiB a directory no reader takes).  The replay tells
# every loss again.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/colfil_loss_groups
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
tq=tests/golden/loss_lines.tq
N=3000
awk -v n=$N 'BEGIN {
  print "0 Process+ P1"; print "0 Mailbox+ M1"; print "10 Send P1 M1 1"
  for (i = 0; i < n; i++) printf "%d Send! 1 %d %d P1\n", 100 + 10 * i, 100 + 10 * i, 100 + 10 * i
  printf "%d Send P1 M1 2\n", 100 + 10 * n
}' >"$dir/many.trace"
# (TQMON_COLFIL_GROUP=200: groups of 200 bytes)
TQMON_COLFIL_GROUP=200 $T record $tq --replay "$dir/many.trace" -o "$dir/many.col" 2>"$dir/record.err" ||
  bad "record: exit $?: $(cat "$dir/record.err")"
# the groups' directory lengths (sensors/colfil.c: the layout)
python3 - "$dir/many.col" >"$dir/groups" <<'PY' || bad "the file's groups: $(cat "$dir/groups")"
import struct, sys
b = open(sys.argv[1], "rb").read()
def var(p):
    v = s = 0
    while True:
        c = b[p]; p += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80: return v, p
hlen = struct.unpack_from("<I", b, 44)[0]
p = 48 + hlen + 4
while p < len(b):
    dlen = struct.unpack_from("<I", b, p)[0]
    d = p + 8
    nsym, q = var(d); slen, q = var(q); q += 4
    nb, q = var(q)
    pay = 0
    for _ in range(nb):
        for _ in range(7): _, q = var(q)   # relation, part, records, begins, wholes, first, last - first
        n, q = var(q); pay += n; q += 4
        ne, q = var(q)
        if ne <= 64:
            for _ in range(ne): _, q = var(q)
    nl, q = var(q)
    print(dlen, nb, nl)
    p = d + dlen + slen + pay
if p != len(b): sys.exit("the groups end at %d, the file at %d" % (p, len(b)))
PY
groups=$(wc -l <"$dir/groups")
losses=$(awk '{ s += $3 } END { print s + 0 }' "$dir/groups")
maxdir=$(sort -n "$dir/groups" | tail -1 | cut -d' ' -f1)
echo "$groups groups, $losses losses, the largest directory $maxdir bytes"
[ "$losses" = $N ] || bad "the file holds $losses losses, not $N"
[ "${maxdir:-0}" -lt 1000 ] || bad "a directory of $maxdir bytes (groups of 200): the losses were held in one group"
$T run $tq --replay "$dir/many.col" --format csv --stats "$dir/replay.json" >"$dir/replay.csv" 2>"$dir/replay.err" ||
  bad "replay: exit $?: $(cat "$dir/replay.err")"
lost=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["packets_lost"])' "$dir/replay.json")
[ "$lost" = $N ] || bad "the replay counted $lost packets lost, not $N"
exit $fails
