#!/bin/sh
# shm_flood.sh - losses counted once and told everywhere (issue 15, points 8
# and 9).  tests/shm/flood.c: two threads send Enqueue events as fast as they
# can for 3 s into rings of 64 slots, and write how many they sent (an
# observation independent of the monitor).  For each worker, the rows
# recorded plus the packets the monitor says it lost on that worker are what
# it sent; the loss is in --stats per sensor and in packets_total; the
# answers that read Enqueue carry the periods they may be incomplete (in
# --stats, in the store's _tqmon_incomplete, marked in the output, and in a
# warning); the monitor's queues stay within their bound (1 MiB here).  A
# string table that runs out (TQMON_ENTITIES=16) loses the packets of new
# strings, once each, and no packet is invalid.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_flood
rm -rf "$dir" && mkdir -p "$dir"
F=build/shm/flood
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cat >"$dir/q.tq" <<'TQ'
range of E is Enqueue
retrieve into Sent (E.Worker, E.Job)
retrieve into Total (E.Worker, N = count(E.Job by E.Worker for ever))
TQ

TQMON_RING_BITS=6 TQMON_SHM_QUEUE_MB=1 $T run tests/shm/subject.tq "$dir/q.tq" --db "$dir/f.db" --stats "$dir/f.json" \
  --format jsonl --exec $F 3 1000000000000 "$dir/sent" >"$dir/f.jsonl" 2>"$dir/f.err" || bad "flood: exit $?: $(cat "$dir/f.err")"
[ -s "$dir/sent" ] || bad "flood: the subject did not say what it sent"
for w in W1 W2; do
  sent=$(awk -v w=$w '$1 == w {print $2}' "$dir/sent")
  rows=$(sqlite3 "$dir/f.db" "SELECT count(*) FROM Sent WHERE Worker = '$w'")
  lost=$(sqlite3 "$dir/f.db" "SELECT coalesce(sum(lost), 0) FROM _tqmon_incomplete WHERE result = 'Sent' AND relation = 'Enqueue' AND entity = '$w'")
  [ "$((rows + lost))" = "$sent" ] || bad "$w: $rows rows recorded and $lost lost, of $sent sent"
  [ "$lost" -gt 0 ] || bad "$w: nothing lost (the flood did not fill its ring?)"
done
python3 - "$dir/f.json" "$dir/sent" <<'PY' || bad "flood: --stats (see above)"
import json, sys
st = json.load(open(sys.argv[1]))
sent = sum(int(l.split()[1]) for l in open(sys.argv[2]))
ok = True
def check(c, what):
    global ok
    if not c:
        print("   ", what)
        ok = False
enq = [s for s in st["sensors"] if s["name"] == "Enqueue"][0]
check(enq["recorded"] + enq["lost"] == sent, "Enqueue: recorded %d + lost %d != sent %d" % (enq["recorded"], enq["lost"], sent))
check(st["packets_lost"] >= enq["lost"] > 0, "packets_lost %d, Enqueue lost %d" % (st["packets_lost"], enq["lost"]))
check(st["packets_total"] == st["packets_seen"] + st["packets_lost"], "packets_total leaves the loss out")
for res in ("Sent", "Total"):
    inc = [x for x in st["incomplete"] if x["result"] == res and x["relation"] == "Enqueue"]
    check(sum(x["lost"] for x in inc) == enq["lost"], "%s: the incomplete periods hold %d of the %d lost" % (res, sum(x["lost"] for x in inc), enq["lost"]))
    check(all(x["entity"] in ("W1", "W2") for x in inc), "%s: a loss on no known worker" % res)
check(all(x["to"] is None for x in st["incomplete"] if x["result"] == "Total"), "Total (an aggregate): a period that ends")
shm = [p for p in st["pms"] if p["name"] == "shm"][0]["detail"]
check(shm["lost"] == st["packets_lost"], "the PM's loss %d is not the run's %d" % (shm["lost"], st["packets_lost"]))
check(0 < shm["queue_bytes"] <= shm["queue_limit"] == 1 << 20, "queue %d bytes, bound %d" % (shm["queue_bytes"], shm["queue_limit"]))
sys.exit(0 if ok else 1)
PY
grep -q '^tqmon: warning: Sent may be incomplete from .* packets of .* lost' "$dir/f.err" || bad "flood: no warning that Sent may be incomplete: $(cat "$dir/f.err")"
grep -q '"relation":"Total".*"incomplete":true' "$dir/f.jsonl" || bad "flood: no row of Total marked incomplete"
grep -q '"relation":"Sent".*"incomplete":true' "$dir/f.jsonl" || bad "flood: no row of Sent marked incomplete"

# the table output marks its rows and lists the periods
TQMON_RING_BITS=4 $T run tests/shm/subject.tq "$dir/q.tq" --exec $F 0.5 1000000000000 "$dir/sent2" >"$dir/t.out" 2>"$dir/t.err" ||
  bad "table: exit $?: $(cat "$dir/t.err")"
grep -q '^! may be incomplete' "$dir/t.out" || bad "table: no list of the periods"
grep -q '^  incomplete from .* packets of Enqueue lost on W[12]$' "$dir/t.out" || bad "table: no period of Enqueue"
grep -q '| !$' "$dir/t.out" || bad "table: no row marked"

# the string table runs out: the packets of new strings are lost, once each
cat >"$dir/n.tq" <<'TQ'
range of N is Note
retrieve into Notes (N.Worker, N.Text)
TQ
TQMON_ENTITIES=16 $T run tests/shm/subject.tq "$dir/n.tq" --db "$dir/n.db" --stats "$dir/n.json" --quiet \
  --exec $F strings 100 "$dir/sent3" 2>"$dir/n.err" || bad "strings: exit $?: $(cat "$dir/n.err")"
grep -q 'invalid: first' "$dir/n.err" && bad "strings: invalid packets: $(cat "$dir/n.err")"
grep -q 'declarations found no slot: the table holds 16' "$dir/n.err" || bad "strings: the full table not said: $(cat "$dir/n.err")"
rows=$(sqlite3 "$dir/n.db" "SELECT count(*) FROM Notes")
lost=$(sqlite3 "$dir/n.db" "SELECT coalesce(sum(lost), 0) FROM _tqmon_incomplete WHERE result = 'Notes' AND relation = 'Note'")
[ "$((rows + lost))" = 100 ] && [ "$lost" -gt 0 ] || bad "strings: $rows rows and $lost lost, of 100 sent"
python3 - "$dir/n.json" <<'PY' || bad "strings: --stats (see above)"
import json, sys
st = json.load(open(sys.argv[1]))
note = [s for s in st["sensors"] if s["name"] == "Note"][0]
shm = [p for p in st["pms"] if p["name"] == "shm"][0]["detail"]
ok = note["recorded"] + note["lost"] == 100 and st["packets_lost"] == note["lost"] == shm["beyond_table"] and shm["invalid"] == 0
if not ok:
    print("    Note", note, "packets_lost", st["packets_lost"], "shm", shm)
sys.exit(0 if ok else 1)
PY

[ $fails -eq 0 ]
